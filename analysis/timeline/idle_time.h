// Idle time per (device, stream), split into HolisticTraceAnalysis' categories
// (HTA 0.6.1 BreakdownAnalysis.get_idle_time_breakdown / _analyze_idle_time_for_stream):
//
//   The stream's GPU events (kernels, memcpy, memset) sorted by start; each event after the
//   first defines one idle interval  gap = start - end of the previous event in that order
//   (not the running max: gaps may be negative when events on one stream overlap, and are
//   kept as they are, as HTA keeps them). The interval's category:
//     host_wait    the event's launch API call started after the previous event ended
//                  (launch.start_ns > prev_end): the CPU was late enqueuing it;
//     kernel_wait  otherwise, if gap < consecutive_kernel_delay_ns: launch overhead between
//                  back-to-back kernels;
//     other        otherwise (cross-stream sync, events, ...).
//   An event with no known launch is never host_wait (but see unlaunched_launch_start_ns).
//   The first event of a stream has no interval (HTA gives it NaN in "other").
//
// README.md in this folder has the derivation and the check against HTA's reference output.
// Thread-compatible: reads the trace only.
#ifndef OPMAP_ANALYSIS_TIMELINE_IDLE_TIME_H_
#define OPMAP_ANALYSIS_TIMELINE_IDLE_TIME_H_

#include <array>
#include <map>
#include <utility>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "analysis/model/trace.h"
#include "analysis/timeline/describe.h"

namespace opmap::analysis {

enum class IdleCategory : uint8_t { kHostWait = 0, kKernelWait = 1, kOther = 2 };
inline constexpr int kIdleCategoryCount = 3;
std::string_view IdleCategoryName(IdleCategory category);  // "host_wait", "kernel_wait", "other"

struct IdleTimeOptions {
  // HTA's default `consecutive_kernel_delay = 30`. HTA documents it as ns, but HTA 0.6.1
  // keeps Kineto's µs timestamps, so it acts as 30 µs; the reference numbers need 30 µs.
  int64_t consecutive_kernel_delay_ns = 30'000;

  // HTA parity only. HTA joins a GPU event that carries a correlation id but has no CPU
  // event with that id to DataFrame row 0, i.e. the trace file's first event, and uses its
  // timestamp as the launch time (index_correlation = 0). Set this to that event's start
  // (in the public H100 traces: the ProfilerStep#N annotation) to reproduce HTA exactly.
  // Unset (default): such events have no launch and are never host_wait.
  std::optional<int64_t> unlaunched_launch_start_ns;
};

struct StreamIdleTime {
  int32_t device = 0;
  int64_t stream = 0;
  int64_t event_count = 0;
  int64_t unknown_launch_count = 0;  // events with no (valid) launch API call
  int64_t idle_ns = 0;               // sum over categories
  std::array<int64_t, kIdleCategoryCount> category_ns = {};     // indexed by IdleCategory
  std::array<int64_t, kIdleCategoryCount> interval_count = {};  // idle intervals per category
  std::array<double, kIdleCategoryCount> ratio = {};  // category_ns / idle_ns (0 when idle_ns is 0)
  // HTA's idle_interval_stats (count, mean, std, min, 25/50/75 %, max) per category, in ns.
  std::array<DescriptiveStats, kIdleCategoryCount> interval_stats = {};

  int64_t ns(IdleCategory c) const { return category_ns[static_cast<int>(c)]; }
  int64_t count(IdleCategory c) const { return interval_count[static_cast<int>(c)]; }
};

// One entry per (device, stream) with GPU events, sorted by device then stream.
// `launch_api_index[i]`: index into trace.api_calls of gpu_events[i]'s launch (by
// correlation; MappingResult::LaunchApiIndex()), -1 when unknown. Entries missing from a
// short span, or out of range, count as unknown.
// The idle gaps of every stream, over a trace given whole or in parts in time order: every
// GPU event of a part starts at or after the start of every event of the parts before it,
// and no event spans the cut (the first gap of a stream in a part is measured from the end
// of its last event in the parts before). Memory: the distinct gap lengths per stream.
class IdleTimeAccumulator {
 public:
  // Gap values count against `budget` (value_counts.h); a stream's row with a negative gap
  // (overlapping events on one stream) stays exact.
  explicit IdleTimeAccumulator(const IdleTimeOptions& options = {},
                               stats::ValueBudget* budget = nullptr)
      : options_(options), budget_(budget) {}
  void Add(const Trace& part, absl::Span<const int32_t> launch_api_index);
  std::vector<StreamIdleTime> Finish() const;

 private:
  struct Stream {
    StreamIdleTime row;
    std::array<stats::ValueCounts, kIdleCategoryCount> gaps;
    bool has_last = false;
    int64_t last_end_ns = 0;
  };
  IdleTimeOptions options_;
  stats::ValueBudget* budget_;
  std::map<std::pair<int32_t, int64_t>, Stream> streams_;  // sorted: rows come out in order
};

std::vector<StreamIdleTime> ComputeIdleTime(const Trace& trace,
                                            absl::Span<const int32_t> launch_api_index,
                                            const IdleTimeOptions& options = {});

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TIMELINE_IDLE_TIME_H_
