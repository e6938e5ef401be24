#include "analysis/timeline/idle_time.h"

#include <algorithm>
#include <map>
#include <utility>

namespace opmap::analysis {

std::string_view IdleCategoryName(IdleCategory category) {
  switch (category) {
    case IdleCategory::kHostWait:
      return "host_wait";
    case IdleCategory::kKernelWait:
      return "kernel_wait";
    case IdleCategory::kOther:
      return "other";
  }
  return "other";
}

namespace {

// The launch start HTA would compare with, or nullopt.
std::optional<int64_t> LaunchStart(const Trace& trace, absl::Span<const int32_t> launch_api_index,
                                   size_t event, const IdleTimeOptions& options) {
  if (event < launch_api_index.size()) {
    const int32_t api = launch_api_index[event];
    if (api >= 0 && static_cast<size_t>(api) < trace.api_calls.size()) {
      return trace.api_calls[api].start_ns;
    }
  }
  if (trace.gpu_events[event].correlation != kNone) return options.unlaunched_launch_start_ns;
  return std::nullopt;
}

bool HasLaunch(const Trace& trace, absl::Span<const int32_t> launch_api_index, size_t event) {
  if (event >= launch_api_index.size()) return false;
  const int32_t api = launch_api_index[event];
  return api >= 0 && static_cast<size_t>(api) < trace.api_calls.size();
}

}  // namespace

std::vector<StreamIdleTime> ComputeIdleTime(const Trace& trace,
                                            absl::Span<const int32_t> launch_api_index,
                                            const IdleTimeOptions& options) {
  std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> streams;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& e = trace.gpu_events[i];
    streams[{e.device, e.stream}].push_back(i);
  }

  std::vector<StreamIdleTime> out;
  out.reserve(streams.size());
  for (auto& [key, events] : streams) {
    // HTA sorts by ts alone (unstable); ties keep trace order here so results are stable.
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return trace.gpu_events[a].start_ns < trace.gpu_events[b].start_ns;
    });
    StreamIdleTime row;
    row.device = key.first;
    row.stream = key.second;
    row.event_count = static_cast<int64_t>(events.size());
    std::array<std::vector<int64_t>, kIdleCategoryCount> gaps;
    for (size_t k = 0; k < events.size(); ++k) {
      const size_t i = events[k];
      if (!HasLaunch(trace, launch_api_index, i)) ++row.unknown_launch_count;
      if (k == 0) continue;
      const GpuEvent& e = trace.gpu_events[i];
      const int64_t prev_end = trace.gpu_events[events[k - 1]].end_ns();
      const int64_t gap = e.start_ns - prev_end;
      const std::optional<int64_t> launch = LaunchStart(trace, launch_api_index, i, options);
      IdleCategory category = IdleCategory::kOther;
      if (launch.has_value() && *launch > prev_end) {
        category = IdleCategory::kHostWait;
      } else if (gap < options.consecutive_kernel_delay_ns) {
        category = IdleCategory::kKernelWait;
      }
      gaps[static_cast<int>(category)].push_back(gap);
    }
    for (int c = 0; c < kIdleCategoryCount; ++c) {
      for (int64_t g : gaps[c]) row.category_ns[c] += g;
      row.interval_count[c] = static_cast<int64_t>(gaps[c].size());
      row.idle_ns += row.category_ns[c];
    }
    for (int c = 0; c < kIdleCategoryCount; ++c) {
      row.ratio[c] = row.idle_ns != 0
                         ? static_cast<double>(row.category_ns[c]) / static_cast<double>(row.idle_ns)
                         : 0.0;
      row.interval_stats[c] = Describe(std::move(gaps[c]));
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace opmap::analysis
