// libFuzzer target for Nsight Compute CSV exports (analysis/import/ncu_importer.h):
// bytes -> ImportNcuCsv -> SummarizeNcu -> RenderNcuJson (parsed back) / Table / Csv,
// and AttachNcuStalls against a small trace holding one launch per profiled kernel
// name, analyzed as `opmap analyze --ncu` does (fuzz_analyze.h).
// Seeds: the real exports in ../shared/ncu, cut to their header and first rows
// (tests/fuzz/make_seeds_real.py). Invariants: errors say why; reports are valid.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/import/ncu_importer.h"
#include "analysis/report/ncu_report.h"
#include "analysis/stalls/ncu_summary.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap;
  using fuzz::Check;
  absl::StatusOr<analysis::NcuProfile> profile = analysis::ImportNcuCsv(fuzz::AsText(data, size));
  if (!profile.ok()) {
    fuzz::CheckErrorSaysWhy(profile.status(), "ImportNcuCsv");
    return 0;
  }
  const analysis::NcuSummary summary = analysis::SummarizeNcu(*profile);
  analysis::NcuReportOptions report;
  report.file = "fuzz.csv";
  report.top = 3;

  // A trace with a launch of each profiled kernel (two of the first), to join against.
  analysis::Trace trace;
  int64_t t = 1000;
  for (size_t i = 0; i < profile->kernels.size() && i < 16; ++i) {
    for (int k = 0; k < (i == 0 ? 2 : 1); ++k) {
      analysis::GpuEvent e;
      e.start_ns = t;
      e.dur_ns = 100 + static_cast<int64_t>(i);
      e.name = trace.strings.Intern(profile->kernels[i].name);
      trace.gpu_events.push_back(e);
      t += 1000;
    }
  }
  report.joined_trace = "fuzz.json";
  report.join = analysis::AttachNcuStalls(*profile, trace);
  Check(report.join->joined + report.join->ncu_unjoined == report.join->ncu_kernels,
        "every ncu kernel joined or not");

  const std::string json = analysis::RenderNcuJson(summary, report);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) fuzz::Fail("ncu JSON report does not parse", json.substr(0, 200));
  Check(!analysis::RenderNcuTable(summary, report).empty(), "ncu table is not empty");
  Check(!analysis::RenderNcuCsv(summary, report, /*with_header=*/true).empty(),
        "ncu CSV is not empty");
  fuzz::AnalyzeTrace(trace);
  return 0;
}
