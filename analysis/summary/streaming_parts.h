// StreamingParts: the rules of trace_parts.h applied to events as they come, in time order,
// so that a trace of any size is summarized a part at a time (SummaryAccumulator) with
// memory for one part plus what goes on across cuts: ranges still open, launch calls
// whose GPU work has not started yet, and the ranges enclosing those calls.
//
// Events must come in nondecreasing start order, ties in the source's order (an external
// sort does that for Kineto files, which write all CPU ranges before the GPU events). Where
// the whole trace needs what a part no longer holds, the part does without and the stats
// count it:
//   - launches_not_held: a GPU event whose launch call (by correlation id) was seen but
//     had been let go — a call that is not a launch by its name (cudaLaunch*, cuLaunch*,
//     *Memcpy*, *Memset*, *GraphLaunch*, hipLaunch*, hipExtLaunch*), or a launch whose GPU
//     work began more than `launch_horizon_ns` after it. The event is then mapped as if
//     the trace had no launch record for it (counted when the call was let go at one of
//     the last two cuts);
//   - late_events: an event older than the last cut (input out of order); it joins the
//     current part;
//   - forced_cuts and calls_past_cap: the memory bounds of the options were reached (a
//     part of events that all start at one time; more launch calls waiting at once than
//     max_carried_calls). Ranges enclosing a zero-length call at a forced cut may then be
//     missing from the call's part.
// An external id that names two operator ranges is not cleared as trace_parts.h does (that
// needs the whole trace); the part maps by it when it holds only one of the two.
#ifndef OPMAP_ANALYSIS_SUMMARY_STREAMING_PARTS_H_
#define OPMAP_ANALYSIS_SUMMARY_STREAMING_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/model/trace.h"
#include "analysis/summary/part_ranges.h"

namespace opmap::analysis {

struct StreamingPartsOptions {
  size_t target_events = size_t{1} << 16;  // events (of any kind) that start in a part
  int64_t launch_horizon_ns = 1'000'000'000;
  // Bounds for hostile or degenerate input, so a part never holds more than a few
  // targets' worth: launch calls carried at once (the latest kept), and the size at which
  // a part is cut even between events that start at the same time.
  size_t max_carried_calls = size_t{1} << 18;
  size_t forced_cut_factor = 4;
};

struct StreamingPartsStats {
  int64_t parts = 0;
  int64_t largest_part_events = 0;  // held at once: new events plus carried ones
  int64_t carried = 0;              // ranges and calls carried into a next part, summed
  int64_t launches_not_held = 0;
  int64_t late_events = 0;
  int64_t forced_cuts = 0;        // cuts between events with one start (see the options)
  int64_t calls_past_cap = 0;     // launch calls let go because max_carried_calls were held
};

class StreamingParts {
 public:
  using PartFn = std::function<void(const Trace&, const PartRanges&)>;

  // `strings` interns every event's names and must outlive this; it is lent to each part
  // for the callback (empty meanwhile), so nothing may intern during `fn`.
  StreamingParts(const TraceInfo& info, StringTable* strings, const StreamingPartsOptions& options,
                 PartFn fn);

  void Add(const GpuEvent& event);
  void Add(const ApiCall& call);
  void Add(const Range& range);
  // Hands out the last part (every range ends there).
  void Finish();

  const StreamingPartsStats& stats() const { return stats_; }
  int64_t gpu_events() const { return gpu_events_; }

 private:
  struct HeldCall {
    bool launch = false;  // by its name: may have GPU work still to come
    bool graph = false;   // a graph launch: many GPU events over time
    bool resolved = false;
  };
  void BeforeAdd(int64_t start_ns);
  void Cut(int64_t at_ns, bool last);
  // Ranges that enclose a call carried into the next part (they are carried too).
  std::vector<bool> RangesEnclosingCarriedCalls(const std::vector<bool>& call_carried) const;
  HeldCall Classify(StringId name);

  TraceInfo info_;
  StringTable* strings_;
  StreamingPartsOptions options_;
  PartFn fn_;
  Trace part_;
  std::vector<int64_t> range_ids_;   // parallel to part_.ranges
  std::vector<HeldCall> calls_;      // parallel to part_.api_calls
  // Calls by (process, correlation id), as the mapping joins them (kernel_mapper.h): into
  // part_.api_calls; and by id alone, for GPU events or calls of unknown process.
  using CallKey = std::pair<int64_t, int64_t>;
  absl::flat_hash_map<CallKey, size_t> call_by_correlation_;
  absl::flat_hash_map<int64_t, size_t> call_by_id_;
  // The held call a GPU event names, if any (the mapping's rule), else -1.
  int64_t HeldCallOf(const GpuEvent& event) const;
  void Hold(const ApiCall& call, size_t index);
  // Correlations of calls let go at the last two cuts: a GPU event that names one counts
  // in launches_not_held (two generations, so the set stays the size of two parts).
  absl::flat_hash_set<CallKey> let_go_, let_go_before_;
  absl::flat_hash_map<StringId, HeldCall> call_kinds_;
  int64_t next_range_id_ = 0;
  size_t new_events_ = 0;
  int64_t last_start_ = INT64_MIN;
  int64_t last_cut_ = INT64_MIN;
  int64_t gpu_events_ = 0;
  StreamingPartsStats stats_;
};

// Adds every event of an in-memory trace to `parts` in start order (ties: ranges, then
// calls, then GPU events, each kind in trace order), as a time-sorted source would give
// them; then parts->Finish(). For tests and fuzzers that compare with the whole trace.
void AddTraceInStartOrder(const Trace& trace, StreamingParts* parts);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_STREAMING_PARTS_H_
