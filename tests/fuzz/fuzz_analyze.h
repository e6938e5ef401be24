// What `opmap analyze` runs on any imported Trace, with the checks the fuzz targets
// share: MapGpuEvents -> Summarize -> RenderAnalyzeJson (parsed back with simdjson, so an
// escaping bug in the writer counts) / RenderAnalyzeTable / RenderAnalyzeCsv.
// Links opmap_mapping, opmap_summary, opmap_report and simdjson.
#ifndef OPMAP_TESTS_FUZZ_FUZZ_ANALYZE_H_
#define OPMAP_TESTS_FUZZ_FUZZ_ANALYZE_H_

#include <simdjson.h>

#include <string>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/trace_summary.h"
#include "tests/fuzz/fuzz_util.h"

namespace opmap::fuzz {

inline void AnalyzeTrace(const analysis::Trace& trace) {
  using namespace opmap::analysis;
  MappingResult mapping = MapGpuEvents(trace);
  Check(mapping.events.size() == trace.gpu_events.size(), "one mapping per GPU event");
  TraceSummary summary = Summarize(trace, mapping);
  const ReportOptions report{"fuzz.json", 0};
  const std::string json = RenderAnalyzeJson(summary, report);
  Check(!json.empty() && json.front() == '{' && json.back() == '}', "JSON report is an object");
  // The report must be valid JSON (UTF-8, escapes) whatever names the trace held.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) Fail("JSON report does not parse", json.substr(0, 200));
  // --top 3 takes the truncating paths of the text renderers.
  const ReportOptions top{"fuzz.json", 3};
  Check(!RenderAnalyzeTable(summary, top).empty(), "table report is not empty");
  Check(!RenderAnalyzeCsv(summary, top, /*with_header=*/true).empty(), "CSV report is not empty");
}

}  // namespace opmap::fuzz

#endif  // OPMAP_TESTS_FUZZ_FUZZ_ANALYZE_H_
