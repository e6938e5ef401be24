#include "analysis/timeline/describe.h"

#include <algorithm>
#include <cmath>

namespace opmap::analysis {

double LinearQuantile(absl::Span<const int64_t> sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double h = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double t = h - static_cast<double>(lo);
  const double a = static_cast<double>(sorted[lo]);
  const double b = static_cast<double>(sorted[hi]);
  // numpy's _lerp: interpolate from the nearer end so that t == 1 gives b exactly.
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

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
  s.p25 = LinearQuantile(values, 0.25);
  s.p50 = LinearQuantile(values, 0.50);
  s.p75 = LinearQuantile(values, 0.75);
  s.p95 = LinearQuantile(values, 0.95);
  s.p99 = LinearQuantile(values, 0.99);
  return s;
}

}  // namespace opmap::analysis
