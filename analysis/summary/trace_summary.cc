#include "analysis/summary/trace_summary.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/summary_accumulator.h"

namespace opmap::analysis {
namespace {

std::vector<LaunchRow> ListLaunches(const Trace& trace, const MappingResult& mapping,
                                    const EventLayerTypes& types) {
  std::vector<LaunchRow> rows;
  rows.reserve(trace.gpu_events.size());
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    const EventMapping& m = mapping.events[i];
    LaunchRow& r = rows.emplace_back();
    r.name = std::string(trace.strings.Get(g.name));
    r.kind = g.kind;
    r.device = g.device;
    r.stream = g.stream;
    r.start_ns = g.start_ns;
    r.end_ns = g.end_ns();
    r.grid = g.grid;
    r.block = g.block;
    r.correlation = g.correlation;
    r.external_id = g.external_id;
    r.graph_id = g.graph_id;
    if (m.range >= 0) r.op = std::string(trace.strings.Get(trace.ranges[m.range].name));
    r.layer_type = types.layer_type[i];
    r.rule = m.rule;
    r.reason = m.reason;
  }
  return rows;
}

}  // namespace

void AddStallSections(const Trace& trace, const MappingResult& mapping, TraceSummary* s) {
  absl::flat_hash_map<std::string, LayerType> kernel_types;
  for (const KernelStats& k : s->kernels) kernel_types[k.name] = k.layer_type;
  s->stalls = SummarizeStalls(trace, kernel_types);
  SummarizeModuleStalls(trace, mapping, &s->stalls);
}

TraceSummary Summarize(const Trace& trace, const MappingResult& mapping,
                       const SummaryOptions& options) {
  SummaryAccumulator acc;
  acc.Add(trace, mapping);
  TraceSummary s = acc.Finish(trace.info);
  AddStallSections(trace, mapping, &s);
  if (options.list_launches) {
    s.launches = ListLaunches(trace, mapping, ClassifyGpuEvents(trace, mapping));
  }
  return s;
}

}  // namespace opmap::analysis
