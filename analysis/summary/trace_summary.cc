#include "analysis/summary/trace_summary.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/summary/event_layer_types.h"

namespace opmap::analysis {
namespace {

const std::string& SortKey(const OperatorStats& row) { return row.name; }
const std::string& SortKey(const KernelStats& row) { return row.name; }
int SortKey(const LayerTypeStats& row) { return static_cast<int>(row.layer_type); }

template <typename T>
void SortByGpuTime(std::vector<T>& rows) {
  // Rows come out of hash maps: ties need a total order, or reports differ run to run.
  std::sort(rows.begin(), rows.end(), [](const T& a, const T& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    if (a.count != b.count) return a.count > b.count;
    return SortKey(a) < SortKey(b);
  });
}

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

TraceSummary Summarize(const Trace& trace, const MappingResult& mapping,
                       const SummaryOptions& options) {
  TraceSummary s;
  s.info = trace.info;
  s.gpu_event_count = static_cast<int64_t>(trace.gpu_events.size());
  s.by_rule = mapping.by_rule;
  s.unmapped_by_reason = mapping.unmapped_by_reason;
  // Every event's layer type and compute flag, and every operator's layer type: shared
  // with BuildRollup (event_layer_types.h) so analyze and the collector agree.
  const EventLayerTypes event_types = ClassifyGpuEvents(trace, mapping);

  // Per operator instance (range): summed GPU time and kernel count.
  struct Instance {
    int64_t gpu_time_ns = 0;
    int64_t kernels = 0;
  };
  absl::flat_hash_map<int32_t, Instance> instances;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    s.gpu_time_ns += g.dur_ns;
    int32_t r = mapping.events[i].range;
    if (r < 0) continue;
    Instance& inst = instances[r];
    inst.gpu_time_ns += g.dur_ns;
    ++inst.kernels;
  }
  s.devices = ComputeDeviceBreakdown(trace, event_types.compute_flags());

  // Operators, grouped by name.
  struct OpAccumulator {
    OperatorStats stats;
    std::vector<double> instance_times;
  };
  absl::flat_hash_map<StringId, OpAccumulator> ops;
  for (const auto& [r, inst] : instances) {
    StringId name = trace.ranges[r].name;
    OpAccumulator& acc = ops[name];
    acc.stats.count += 1;
    acc.stats.kernel_count += inst.kernels;
    acc.stats.gpu_time_ns += inst.gpu_time_ns;
    acc.instance_times.push_back(static_cast<double>(inst.gpu_time_ns));
  }
  for (auto& [name, acc] : ops) {
    acc.stats.name = std::string(trace.strings.Get(name));
    const OperatorLayerType& op_type = event_types.operator_types.at(name);
    acc.stats.layer_type = op_type.layer_type;
    acc.stats.layer_type_from_name = op_type.from_name;
    acc.stats.instance_gpu_time_ns = stats::ExactPercentiles(std::move(acc.instance_times));
    s.operators.push_back(std::move(acc.stats));
  }
  SortByGpuTime(s.operators);

  // Kernels by name, and every event's layer type (its operator's, else its name's).
  struct KernelAccumulator {
    KernelStats stats;
    std::vector<double> durations;
    LayerTimes types = {};
  };
  absl::flat_hash_map<StringId, KernelAccumulator> kernels;
  LayerTimes layer_time = {};
  std::array<int64_t, kNumLayerTypes> layer_count = {};
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    int32_t r = mapping.events[i].range;
    const LayerType t = event_types.layer_type[i];
    if (r >= 0) {
      ++s.layer_type_source_operator;
    } else {
      ++s.layer_type_source_kernel_name;
    }
    layer_time[static_cast<int>(t)] += g.dur_ns;
    ++layer_count[static_cast<int>(t)];
    KernelAccumulator& acc = kernels[g.name];
    if (acc.stats.count == 0 || g.dur_ns < acc.stats.min_ns) acc.stats.min_ns = g.dur_ns;
    if (acc.stats.count == 0 || g.dur_ns > acc.stats.max_ns) acc.stats.max_ns = g.dur_ns;
    acc.stats.count += 1;
    acc.stats.gpu_time_ns += g.dur_ns;
    acc.durations.push_back(static_cast<double>(g.dur_ns));
    acc.types[static_cast<int>(t)] += g.dur_ns;
  }
  for (auto& [name, acc] : kernels) {
    acc.stats.name = std::string(trace.strings.Get(name));
    acc.stats.layer_type = HeaviestLayerType(acc.types);
    acc.stats.duration_ns = stats::ExactPercentiles(std::move(acc.durations));
    s.kernels.push_back(std::move(acc.stats));
  }
  SortByGpuTime(s.kernels);

  for (int t = 0; t < kNumLayerTypes; ++t) {
    if (layer_count[t] == 0) continue;
    LayerTypeStats row;
    row.layer_type = static_cast<LayerType>(t);
    row.count = layer_count[t];
    row.gpu_time_ns = layer_time[t];
    row.share = s.gpu_time_ns > 0 ? static_cast<double>(layer_time[t]) / s.gpu_time_ns : 0;
    s.layer_types.push_back(row);
  }
  SortByGpuTime(s.layer_types);

  std::vector<int32_t> launches = mapping.LaunchApiIndex();
  s.idle_time = ComputeIdleTime(trace, launches);
  s.launch_stats = ComputeLaunchStats(trace, launches);
  s.host_ranges = SummarizeHostRanges(trace);
  s.modules = SummarizeModules(trace, mapping);
  absl::flat_hash_map<std::string, LayerType> kernel_types;
  for (const KernelStats& k : s.kernels) kernel_types[k.name] = k.layer_type;
  s.stalls = SummarizeStalls(trace, kernel_types);
  SummarizeModuleStalls(trace, mapping, &s.stalls);
  if (options.list_launches) s.launches = ListLaunches(trace, mapping, event_types);
  return s;
}

}  // namespace opmap::analysis
