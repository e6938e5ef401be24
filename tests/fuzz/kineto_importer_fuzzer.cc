// libFuzzer target for the Kineto importer and everything `opmap analyze` runs after it:
// bytes -> ImportKinetoBytes (gzip or plain JSON) -> MapGpuEvents -> Summarize ->
// RenderAnalyzeJson / RenderAnalyzeTable / RenderAnalyzeCsv. A crash, sanitizer report,
// leak, timeout or out-of-memory anywhere on that path is a bug; an InvalidArgument or
// DataLoss status is the expected answer to garbage. The JSON report is parsed back, so
// an escaping bug in the writer counts as a crash too.
//
// Build and run: tests/fuzz/run_fuzz.sh [SECONDS]   (docs/fuzzing.md)
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/trace_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap::analysis;
  absl::StatusOr<Trace> trace =
      ImportKinetoBytes(std::string(reinterpret_cast<const char*>(data), size));
  if (!trace.ok()) {
    // Errors must say something (the CLI prints them as the whole diagnosis).
    if (trace.status().message().empty()) std::abort();
    return 0;
  }
  MappingResult mapping = MapGpuEvents(*trace);
  if (mapping.events.size() != trace->gpu_events.size()) std::abort();
  TraceSummary summary = Summarize(*trace, mapping);
  const ReportOptions report{"fuzz.json", 0};
  std::string json = RenderAnalyzeJson(summary, report);
  if (json.empty() || json.front() != '{' || json.back() != '}') std::abort();
  // The report must be valid JSON (UTF-8, escapes) whatever names the trace held.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) std::abort();
  // --top 3 takes the truncating paths of the text renderers.
  const ReportOptions top{"fuzz.json", 3};
  if (RenderAnalyzeTable(summary, top).empty()) std::abort();
  if (RenderAnalyzeCsv(summary, top, /*with_header=*/true).empty()) std::abort();
  return 0;
}
