// Descriptive statistics of integer-ns samples, as pandas `Series.describe()` computes
// them (what HTA prints): count, mean, sample standard deviation, min, quantiles by
// linear interpolation between closest ranks (numpy's default "linear" method), max.
// Exact on one trace: every sample is kept; for mergeable sketches see analysis/stats.
#ifndef OPMAP_ANALYSIS_TIMELINE_DESCRIBE_H_
#define OPMAP_ANALYSIS_TIMELINE_DESCRIBE_H_

#include <cstdint>
#include <vector>

#include "analysis/stats/value_counts.h"

#include "absl/types/span.h"

namespace opmap::analysis {

// All values in the unit of the samples (ns here). With count == 0 every field is 0;
// with count == 1 stddev is 0 (pandas prints NaN).
struct DescriptiveStats {
  int64_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (divides by n - 1), like pandas
  double min = 0;
  double p25 = 0;
  double p50 = 0;
  double p75 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};

// Sorts its copy of `values`.
DescriptiveStats Describe(std::vector<int64_t> values);

// The same over a multiset (value_counts.h): what Describe returns for the values written
// out one by one, except that the standard deviation's sum of squares is taken per
// distinct value (it may differ from Describe's in the last bits of a long double).
// A sketched row gives its sketch's quantiles, min, max and mean (from its sum); its
// stddev is NaN (a sketch cannot give it).
DescriptiveStats DescribeCounts(const stats::ValueCounts& values);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TIMELINE_DESCRIBE_H_
