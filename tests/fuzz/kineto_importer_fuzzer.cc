// libFuzzer target for the Kineto importer and everything `opmap analyze` runs after it:
// bytes -> ImportKinetoBytes (gzip or plain JSON) -> MapGpuEvents -> Summarize ->
// RenderAnalyzeJson / RenderAnalyzeTable / RenderAnalyzeCsv, and the streamed summary
// (parts of five events: its counts and sums must equal the whole trace's). A crash, sanitizer report,
// leak, timeout or out-of-memory anywhere on that path is a bug; an InvalidArgument or
// DataLoss status is the expected answer to garbage. The JSON report is parsed back, so
// an escaping bug in the writer counts as a crash too.
//
// Build and run: tests/fuzz/run_fuzz.sh [SECONDS] or tests/fuzz/run_all.sh (docs/fuzzing.md)
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/import/kineto_importer.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<opmap::analysis::Trace> trace =
      opmap::analysis::ImportKinetoBytes(std::string(opmap::fuzz::AsText(data, size)));
  if (!trace.ok()) {
    opmap::fuzz::CheckErrorSaysWhy(trace.status(), "ImportKinetoBytes");
    return 0;
  }
  opmap::fuzz::AnalyzeTrace(*trace);
  opmap::fuzz::CheckStreamedSummary(
      *trace, opmap::analysis::Summarize(*trace, opmap::analysis::MapGpuEvents(*trace)));
  return 0;
}
