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
  SortByStart(intervals);
  int64_t total = 0;
  bool open = false;
  int64_t cur_start = 0;
  int64_t cur_end = 0;
  for (const Interval& iv : intervals) {
    if (iv.end_ns <= iv.start_ns) continue;
    if (!open || iv.start_ns > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = iv.start_ns;
      cur_end = iv.end_ns;
      open = true;
    } else {
      cur_end = std::max(cur_end, iv.end_ns);
    }
  }
  if (open) total += cur_end - cur_start;
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
