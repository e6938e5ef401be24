#include "analysis/stats/quantiles.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opmap::stats {
// numpy's _lerp: interpolates from the nearer end so that the result is monotonic in
// t and equals b exactly at t == 1 (a + (b - a) * t alone can miss b by an ulp).
double Lerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double ExactQuantile(absl::Span<const double> sorted, double q) {
  if (sorted.empty() || !(q >= 0.0 && q <= 1.0)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const double lo = std::floor(h);
  const size_t i = static_cast<size_t>(lo);
  const size_t j = std::min(i + 1, sorted.size() - 1);
  return Lerp(sorted[i], sorted[j], h - lo);
}

Percentiles ExactPercentiles(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  std::sort(values.begin(), values.end());
  return Percentiles{ExactQuantile(values, 0.50), ExactQuantile(values, 0.95),
                     ExactQuantile(values, 0.99)};
}

}  // namespace opmap::stats
