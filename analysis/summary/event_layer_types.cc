#include "analysis/summary/event_layer_types.h"

#include <optional>
#include <utility>

namespace opmap::analysis {
namespace {

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

}  // namespace

LayerType HeaviestLayerType(const LayerTimes& times) {
  int best = static_cast<int>(LayerType::kOther);
  int64_t best_time = -1;
  for (int t = 0; t < kNumLayerTypes; ++t) {
    if (times[t] > best_time) {
      best = t;
      best_time = times[t];
    }
  }
  return static_cast<LayerType>(best);
}

EventLayerTypes ClassifyGpuEvents(const Trace& trace, const MappingResult& mapping) {
  const size_t n = trace.gpu_events.size();
  EventLayerTypes out;
  out.event_count = n;
  out.layer_type.resize(n, LayerType::kOther);
  out.is_compute.reset(new bool[n]);
  LayerClassifier classifier;
  auto kernel_type = [&](StringId id) {
    return classifier.ClassifyKernel(id, trace.strings.Get(id));
  };
  ComputeFlags compute_flags(trace);

  // Per operator name: GPU time by the kernels' own name types, to type operators that
  // no operator-name rule matches.
  absl::flat_hash_map<StringId, LayerTimes> op_kernel_types;
  for (size_t i = 0; i < n; ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    out.is_compute[i] = compute_flags.IsCompute(g);
    int32_t r = mapping.events[i].range;
    if (r < 0) continue;
    op_kernel_types[trace.ranges[r].name][static_cast<int>(kernel_type(g.name))] += g.dur_ns;
  }
  for (const auto& [name, times] : op_kernel_types) {
    std::optional<LayerType> by_name = classifier.ClassifyOperator(name, trace.strings.Get(name));
    out.operator_types[name] = by_name ? OperatorLayerType{*by_name, true}
                                       : OperatorLayerType{HeaviestLayerType(times), false};
  }
  for (size_t i = 0; i < n; ++i) {
    int32_t r = mapping.events[i].range;
    out.layer_type[i] = r >= 0 ? out.operator_types[trace.ranges[r].name].layer_type
                               : kernel_type(trace.gpu_events[i].name);
  }
  return out;
}

}  // namespace opmap::analysis
