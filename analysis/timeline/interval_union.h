// Union of half-open [start, end) intervals in integer nanoseconds: the one piece of
// interval algebra behind busy / compute time (docs/metrics.md: "never summed durations").
// Sort by start, then one sweep. Intervals with end <= start contribute nothing.
//
//   std::vector<Interval> v = {{0, 10}, {5, 20}, {30, 40}};
//   UnionLength(absl::MakeSpan(v));  // 30 (v is left sorted)
//
// Thread-compatible: no shared state.
#ifndef OPMAP_ANALYSIS_TIMELINE_INTERVAL_UNION_H_
#define OPMAP_ANALYSIS_TIMELINE_INTERVAL_UNION_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace opmap::analysis {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // exclusive
};

// Length of the union. Sorts `intervals` by start in place (that is the only change).
int64_t UnionLength(absl::Span<Interval> intervals);

// The same over intervals that come in batches, each batch starting no earlier than the
// batches before it: the length the batch adds beyond *covered_until (the union's end so
// far; INT64_MIN at first), which it then advances.
int64_t UnionLengthAfter(absl::Span<Interval> intervals, int64_t* covered_until);

// The union as disjoint intervals, sorted by start. Touching intervals ([0,5) and [5,9))
// merge into one; empty and inverted intervals are dropped.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TIMELINE_INTERVAL_UNION_H_
