#include "analysis/timeline/describe.h"

#include <algorithm>
#include <cmath>

#include "analysis/stats/quantiles.h"

namespace opmap::analysis {

DescriptiveStats Describe(std::vector<int64_t> values) {
  DescriptiveStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.count = static_cast<int64_t>(n);
  // long double: sums of ~1e6 samples of ~1e12 ns keep full precision.
  long double sum = 0;
  for (int64_t v : values) sum += v;
  const long double mean = sum / n;
  s.mean = static_cast<double>(mean);
  if (n > 1) {
    long double sq = 0;
    for (int64_t v : values) sq += (v - mean) * (v - mean);
    s.stddev = static_cast<double>(std::sqrt(sq / (n - 1)));
  }
  s.min = static_cast<double>(values.front());
  s.max = static_cast<double>(values.back());
  // One quantile definition for all of opmap: analysis/stats.
  const std::vector<double> sorted(values.begin(), values.end());
  s.p25 = stats::ExactQuantile(sorted, 0.25);
  s.p50 = stats::ExactQuantile(sorted, 0.50);
  s.p75 = stats::ExactQuantile(sorted, 0.75);
  s.p95 = stats::ExactQuantile(sorted, 0.95);
  s.p99 = stats::ExactQuantile(sorted, 0.99);
  return s;
}

}  // namespace opmap::analysis
