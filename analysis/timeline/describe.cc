#include "analysis/timeline/describe.h"

#include <cmath>
#include <limits>
#include <utility>

#include "analysis/stats/quantiles.h"

namespace opmap::analysis {

DescriptiveStats Describe(std::vector<int64_t> values) {
  stats::ValueCounts counts;
  for (int64_t v : values) counts.Add(v);
  return DescribeCounts(counts);
}

DescriptiveStats DescribeCounts(const stats::ValueCounts& values) {
  DescriptiveStats s;
  if (values.count() == 0) return s;
  s.count = values.count();
  // Sorted once for every quantile (one definition for all of opmap: analysis/stats); a
  // sketched row answers from its sketch.
  const std::vector<std::pair<int64_t, int64_t>> sorted =
      values.sketched() ? std::vector<std::pair<int64_t, int64_t>>{} : values.Sorted();
  auto quantile = [&](double q) {
    return values.sketched() ? values.Quantile(q) : stats::QuantileOfSorted(sorted, s.count, q);
  };
  s.p25 = quantile(0.25);
  s.p50 = quantile(0.50);
  s.p75 = quantile(0.75);
  s.p95 = quantile(0.95);
  s.p99 = quantile(0.99);
  if (values.sketched()) {
    s.min = quantile(0.0);
    s.max = quantile(1.0);
    s.mean = values.sketch_sum() / static_cast<double>(s.count);
    s.stddev = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const size_t n = static_cast<size_t>(s.count);
  // long double: sums of ~1e6 samples of ~1e12 ns keep full precision.
  long double sum = 0;
  for (const auto& [v, k] : sorted) sum += static_cast<long double>(v) * k;
  const long double mean = sum / n;
  s.mean = static_cast<double>(mean);
  if (n > 1) {
    long double sq = 0;
    for (const auto& [v, k] : sorted) sq += (v - mean) * (v - mean) * k;
    s.stddev = static_cast<double>(std::sqrt(sq / (n - 1)));
  }
  s.min = static_cast<double>(sorted.front().first);
  s.max = static_cast<double>(sorted.back().first);
  return s;
}

}  // namespace opmap::analysis
