#include "analysis/summary/trace_summary.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace opmap::analysis {
namespace {

constexpr int kLayerTypeCount = static_cast<int>(LayerType::kOther) + 1;
using LayerTimes = std::array<int64_t, kLayerTypeCount>;

LayerType Heaviest(const LayerTimes& times) {
  int best = static_cast<int>(LayerType::kOther);
  int64_t best_time = -1;
  for (int t = 0; t < kLayerTypeCount; ++t) {
    if (times[t] > best_time) {
      best = t;
      best_time = times[t];
    }
  }
  return static_cast<LayerType>(best);
}

// Kernel-type (compute or not) per distinct (name, is-memory-event): a trace has few
// distinct names, and the regexes behind the answer are not cheap.
class ComputeFlags {
 public:
  explicit ComputeFlags(const Trace& trace) : trace_(trace) {}
  bool IsCompute(const GpuEvent& g) {
    bool memory = g.kind != GpuEventKind::kKernel;
    auto key = std::make_pair(g.name, memory);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    bool compute =
        ClassifyKernelType(trace_.strings.Get(g.name), memory) == KernelType::kComputation;
    cache_.emplace(key, compute);
    return compute;
  }

 private:
  const Trace& trace_;
  absl::flat_hash_map<std::pair<StringId, bool>, bool> cache_;
};

template <typename T>
void SortByGpuTime(std::vector<T>& rows) {
  std::sort(rows.begin(), rows.end(), [](const T& a, const T& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.count > b.count;
  });
}

}  // namespace

TraceSummary Summarize(const Trace& trace, const MappingResult& mapping) {
  TraceSummary s;
  s.info = trace.info;
  s.gpu_event_count = static_cast<int64_t>(trace.gpu_events.size());
  s.by_rule = mapping.by_rule;
  s.unmapped_by_reason = mapping.unmapped_by_reason;
  LayerClassifier classifier;
  auto kernel_type = [&](StringId id) {
    return classifier.ClassifyKernel(id, trace.strings.Get(id));
  };
  ComputeFlags compute_flags(trace);

  // Per operator instance (range): summed GPU time and kernel count.
  struct Instance {
    int64_t gpu_time_ns = 0;
    int64_t kernels = 0;
  };
  absl::flat_hash_map<int32_t, Instance> instances;
  // Per operator name: GPU time by the kernels' own name types, to type operators
  // that no operator-name rule matches.
  absl::flat_hash_map<StringId, LayerTimes> op_kernel_types;
  // A bool array (not vector<bool>) so it can be viewed as a span.
  std::unique_ptr<bool[]> is_compute(new bool[trace.gpu_events.size()]);
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    s.gpu_time_ns += g.dur_ns;
    is_compute[i] = compute_flags.IsCompute(g);
    int32_t r = mapping.events[i].range;
    if (r < 0) continue;
    Instance& inst = instances[r];
    inst.gpu_time_ns += g.dur_ns;
    ++inst.kernels;
    op_kernel_types[trace.ranges[r].name][static_cast<int>(kernel_type(g.name))] += g.dur_ns;
  }
  s.devices = ComputeDeviceBreakdown(
      trace, absl::Span<const bool>(is_compute.get(), trace.gpu_events.size()));

  // Operator layer types: the operator-name rule first, else the heaviest kernel type.
  absl::flat_hash_map<StringId, std::pair<LayerType, bool>> op_type;
  for (const auto& [name, times] : op_kernel_types) {
    std::optional<LayerType> by_name = classifier.ClassifyOperator(name, trace.strings.Get(name));
    op_type[name] = by_name ? std::make_pair(*by_name, true) : std::make_pair(Heaviest(times), false);
  }

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
    std::tie(acc.stats.layer_type, acc.stats.layer_type_from_name) = op_type[name];
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
  std::array<int64_t, kLayerTypeCount> layer_count = {};
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    int32_t r = mapping.events[i].range;
    LayerType t;
    if (r >= 0) {
      t = op_type[trace.ranges[r].name].first;
      ++s.layer_type_source_operator;
    } else {
      t = kernel_type(g.name);
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
    acc.stats.layer_type = Heaviest(acc.types);
    acc.stats.duration_ns = stats::ExactPercentiles(std::move(acc.durations));
    s.kernels.push_back(std::move(acc.stats));
  }
  SortByGpuTime(s.kernels);

  for (int t = 0; t < kLayerTypeCount; ++t) {
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
  return s;
}

}  // namespace opmap::analysis
