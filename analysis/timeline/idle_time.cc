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

void IdleTimeAccumulator::Add(const Trace& part, absl::Span<const int32_t> launch_api_index) {
  std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> by_stream;
  for (size_t i = 0; i < part.gpu_events.size(); ++i) {
    const GpuEvent& e = part.gpu_events[i];
    by_stream[{e.device, e.stream}].push_back(i);
  }
  for (auto& [key, events] : by_stream) {
    // HTA sorts by ts alone (unstable); ties keep trace order here so results are stable.
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return part.gpu_events[a].start_ns < part.gpu_events[b].start_ns;
    });
    auto [it, inserted] = streams_.try_emplace(
        key, Stream{{}, {stats::ValueCounts(budget_), stats::ValueCounts(budget_),
                         stats::ValueCounts(budget_)}});
    Stream& s = it->second;
    s.row.device = key.first;
    s.row.stream = key.second;
    s.row.event_count += static_cast<int64_t>(events.size());
    for (const size_t i : events) {
      if (!HasLaunch(part, launch_api_index, i)) ++s.row.unknown_launch_count;
      const GpuEvent& e = part.gpu_events[i];
      if (s.has_last) {
        const int64_t gap = e.start_ns - s.last_end_ns;
        const std::optional<int64_t> launch = LaunchStart(part, launch_api_index, i, options_);
        IdleCategory category = IdleCategory::kOther;
        if (launch.has_value() && *launch > s.last_end_ns) {
          category = IdleCategory::kHostWait;
        } else if (gap < options_.consecutive_kernel_delay_ns) {
          category = IdleCategory::kKernelWait;
        }
        const int c = static_cast<int>(category);
        s.gaps[c].Add(gap);
        s.row.category_ns[c] += gap;
        ++s.row.interval_count[c];
        s.row.idle_ns += gap;
      }
      s.has_last = true;
      s.last_end_ns = e.end_ns();
    }
  }
}

std::vector<StreamIdleTime> IdleTimeAccumulator::Finish() const {
  std::vector<StreamIdleTime> out;
  out.reserve(streams_.size());
  for (const auto& [key, s] : streams_) {
    StreamIdleTime row = s.row;
    for (int c = 0; c < kIdleCategoryCount; ++c) {
      row.ratio[c] = row.idle_ns != 0
                         ? static_cast<double>(row.category_ns[c]) / static_cast<double>(row.idle_ns)
                         : 0.0;
      row.interval_stats[c] = DescribeCounts(s.gaps[c]);
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<StreamIdleTime> ComputeIdleTime(const Trace& trace,
                                            absl::Span<const int32_t> launch_api_index,
                                            const IdleTimeOptions& options) {
  IdleTimeAccumulator acc(options);
  acc.Add(trace, launch_api_index);
  return acc.Finish();
}

}  // namespace opmap::analysis
