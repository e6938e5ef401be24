// Exact quantiles over a full sample, for offline analysis of one trace where
// keeping every value is cheap. Fleet-wide and cross-window percentiles must come
// from DDSketch (ddsketch.h) instead: exact percentiles cannot be merged.
//
// Convention: numpy's default ("linear", Hyndman & Fan type 7). With n sorted values
// x[0..n-1] and h = (n - 1) * q, the result is x[floor h] + (h - floor h) *
// (x[ceil h] - x[floor h]). Reports should say "exact (linear interpolation)".
//
// Thread-safety: pure functions.
#ifndef OPMAP_ANALYSIS_STATS_QUANTILES_H_
#define OPMAP_ANALYSIS_STATS_QUANTILES_H_

#include <vector>

#include "absl/types/span.h"

namespace opmap::stats {

// Returns the q-quantile of `sorted` (ascending, no NaN) with numpy's linear
// interpolation. Returns NaN when `sorted` is empty or q is not in [0, 1]; callers
// print such a value as "unavailable".
double ExactQuantile(absl::Span<const double> sorted, double q);

// The interpolation ExactQuantile uses between x[floor h] = a and x[ceil h] = b at
// t = h - floor h (numpy's _lerp), for other holders of sorted values (value_counts.h).
double Lerp(double a, double b, double t);

// p50/p95/p99 in the caller's unit. All three are NaN when there is no value.
struct Percentiles {
  double p50;
  double p95;
  double p99;
  // From a DDSketch (value_counts.h: the row passed its memory budget), not exact.
  bool sketched = false;
};

// Sorts `values` (taken by value: the caller's order is kept) and returns the three
// percentiles. NaN values are dropped first: they have no rank, and sorting with
// them would break std::sort's ordering contract.
Percentiles ExactPercentiles(std::vector<double> values);

}  // namespace opmap::stats

#endif  // OPMAP_ANALYSIS_STATS_QUANTILES_H_
