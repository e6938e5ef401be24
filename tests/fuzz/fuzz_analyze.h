// What `opmap analyze` runs on any imported Trace, with the checks the fuzz targets
// share: MapGpuEvents -> Summarize -> RenderAnalyzeJson (parsed back with simdjson, so an
// escaping bug in the writer counts) / RenderAnalyzeTable / RenderAnalyzeCsv; and the same
// trace summarized a part at a time (CheckStreamedSummary).
// Links opmap_mapping, opmap_summary, opmap_report and simdjson.
#ifndef OPMAP_TESTS_FUZZ_FUZZ_ANALYZE_H_
#define OPMAP_TESTS_FUZZ_FUZZ_ANALYZE_H_

#include <simdjson.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/report/analyze_report.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/summary_accumulator.h"
#include "analysis/summary/trace_summary.h"
#include "tests/fuzz/fuzz_util.h"

namespace opmap::fuzz {

// The summary built a part at a time (streaming_parts.h, the path `opmap analyze` takes on
// Kineto files), from the trace's events in start order, in parts of a few events: every
// count and sum must be the whole trace's.
inline void CheckStreamedSummary(analysis::Trace& trace, const analysis::TraceSummary& whole) {
  using namespace opmap::analysis;
  stats::ValueBudget budget(64);  // small: some rows turn into sketches
  SummaryAccumulator acc(&budget);
  StringTable strings = std::move(trace.strings);
  StreamingParts parts(trace.info, &strings, {.target_events = 5},
                       [&](const Trace& part, const PartRanges& ranges) {
                         acc.Add(part, MapGpuEvents(part), &ranges);
                       });
  AddTraceInStartOrder(trace, &parts);
  trace.strings = std::move(strings);
  TraceSummary s = acc.Finish(trace.info);
  Check(s.gpu_event_count == whole.gpu_event_count, "streamed: GPU event count");
  Check(s.gpu_time_ns == whole.gpu_time_ns, "streamed: summed GPU time");
  Check(s.devices.size() == whole.devices.size(), "streamed: devices");
  for (size_t d = 0; d < s.devices.size() && d < whole.devices.size(); ++d) {
    Check(s.devices[d].busy_ns == whole.devices[d].busy_ns, "streamed: a device's busy time");
    Check(s.devices[d].compute_ns == whole.devices[d].compute_ns, "streamed: compute time");
  }
  Check(s.kernels.size() == whole.kernels.size(), "streamed: kernel rows");
  Check(s.host_ranges.range_count == whole.host_ranges.range_count, "streamed: range count");
  int64_t idle = 0, whole_idle = 0;
  for (const StreamIdleTime& t : s.idle_time) idle += t.idle_ns;
  for (const StreamIdleTime& t : whole.idle_time) whole_idle += t.idle_ns;
  Check(idle == whole_idle, "streamed: idle time");
  const std::string json = RenderAnalyzeJson(s, {"fuzz.json", 0});
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) Fail("streamed JSON report does not parse", json.substr(0, 200));
}

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
