#include "analysis/timeline/interval_union.h"

#include <algorithm>

namespace opmap::analysis {
namespace {

void SortByStart(absl::Span<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
}

}  // namespace

int64_t UnionLength(absl::Span<Interval> intervals) {
  int64_t covered_until = INT64_MIN;
  return UnionLengthAfter(intervals, &covered_until);
}

int64_t UnionLengthAfter(absl::Span<Interval> intervals, int64_t* covered_until) {
  SortByStart(intervals);
  int64_t total = 0;
  int64_t until = *covered_until;
  for (const Interval& iv : intervals) {
    if (iv.end_ns <= iv.start_ns || iv.end_ns <= until) continue;
    total += iv.end_ns - std::max(iv.start_ns, until);
    until = iv.end_ns;
  }
  *covered_until = until;
  return total;
}

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  SortByStart(absl::MakeSpan(intervals));
  std::vector<Interval> merged;
  for (const Interval& iv : intervals) {
    if (iv.end_ns <= iv.start_ns) continue;
    if (merged.empty() || iv.start_ns > merged.back().end_ns) {
      merged.push_back(iv);
    } else {
      merged.back().end_ns = std::max(merged.back().end_ns, iv.end_ns);
    }
  }
  return merged;
}

}  // namespace opmap::analysis
