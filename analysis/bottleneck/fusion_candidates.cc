// Fusion candidates of the mapping sheet: runs of small elementwise / norm / softmax
// kernels between larger kernels on one stream, grouped by their kernel-name sequence.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "analysis/bottleneck/sheet_internal.h"

namespace opmap::analysis::sheet {

// Events of each (device, stream) in start order (trace order on ties, as idle_time.cc).
StreamMap StreamOrder(const Trace& trace) {
  StreamMap streams;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    streams[{trace.gpu_events[i].device, trace.gpu_events[i].stream}].push_back(i);
  }
  for (auto& [key, events] : streams) {
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return trace.gpu_events[a].start_ns < trace.gpu_events[b].start_ns;
    });
  }
  return streams;
}

void BuildFusion(const Trace& trace, const MappingResult& mapping, const EventLayerTypes& types,
                 const StreamMap& streams,
                 const MappingSheetOptions& options, MappingSheet& sheet) {
  auto fusible = [&](size_t i) {
    const GpuEvent& e = trace.gpu_events[i];
    const LayerType t = types.layer_type[i];
    return e.kind == GpuEventKind::kKernel && e.dur_ns < options.large_kernel_ns &&
           (t == LayerType::kElementwise || t == LayerType::kNorm || t == LayerType::kSoftmax);
  };
  auto op_name = [&](size_t i) {
    const int32_t r = mapping.events[i].range;
    return r >= 0 ? std::string(trace.strings.Get(trace.ranges[r].name)) : "(unmapped)";
  };
  // Keyed by device, stream and the kernel-name sequence: identical runs group together.
  std::map<std::tuple<int32_t, int64_t, std::vector<StringId>>, FusionCandidate> groups;
  for (const auto& [key, events] : streams) {
    size_t k = 0;
    while (k < events.size()) {
      if (!fusible(events[k])) {
        ++k;
        continue;
      }
      size_t end = k;
      while (end < events.size() && fusible(events[end])) ++end;
      const size_t len = end - k;
      if (len >= static_cast<size_t>(std::max(1, options.min_run_length))) {
        std::vector<StringId> ids;
        int64_t sum = 0;
        for (size_t j = k; j < end; ++j) {
          const GpuEvent& e = trace.gpu_events[events[j]];
          ids.push_back(e.name);
          sum += e.dur_ns;
        }
        FusionCandidate& c = groups[{key.first, key.second, ids}];
        if (c.occurrences == 0) {
          for (size_t j = k; j < end; ++j) {
            c.kernels.emplace_back(trace.strings.Get(trace.gpu_events[events[j]].name));
            c.operators.push_back(op_name(events[j]));
          }
          c.stream = static_cast<int32_t>(key.second);
          if (k > 0) c.before = std::string(trace.strings.Get(trace.gpu_events[events[k - 1]].name));
          if (end < events.size()) {
            c.after = std::string(trace.strings.Get(trace.gpu_events[events[end]].name));
          }
        }
        ++c.occurrences;
        c.gpu_time_ns += sum;
        // GPU time only: the fused kernel is assumed to take at least the run's mean kernel
        // time, so at most the other L − 1 means go. Gaps inside the run are not counted:
        // they are host wait / launch overhead, bounded by those mitigations instead.
        c.saving_bound_ns += sum - sum / static_cast<int64_t>(len);
      }
      k = end;
    }
  }
  for (auto& [key, c] : groups) sheet.fusion.push_back(std::move(c));
  std::stable_sort(sheet.fusion.begin(), sheet.fusion.end(),
                   [](const FusionCandidate& a, const FusionCandidate& b) {
                     if (a.saving_bound_ns != b.saving_bound_ns) {
                       return a.saving_bound_ns > b.saving_bound_ns;
                     }
                     return a.occurrences > b.occurrences;
                   });
}

}  // namespace opmap::analysis::sheet
