#include "analysis/stats/quantiles.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::stats {
namespace {

// Expected values are numpy.quantile(x, q) (method="linear"), recomputed in plain
// Python as x[lo] + (h - lo) * (x[lo + 1] - x[lo]) with h = (n - 1) * q:
//   [1,2,3,4]: q=.5 -> 2.5, q=.95 -> 3.85, q=.99 -> 3.97
//   [15,20,35,40,50]: q=.25 -> 20, q=.4 -> 29
//   1..100: p50 -> 50.5, p95 -> 95.05, p99 -> 99.01
//   sorted [-1,0,2,3.5,10]: q=.1 -> -0.6, q=.5 -> 2, q=.9 -> 7.4
TEST(ExactQuantileTest, MatchesNumpyLinear) {
  const std::vector<double> a = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(ExactQuantile(a, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(ExactQuantile(a, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(ExactQuantile(a, 0.95), 3.85);
  EXPECT_DOUBLE_EQ(ExactQuantile(a, 0.99), 3.97);
  EXPECT_EQ(ExactQuantile(a, 1.0), 4.0);  // exact at the top, as numpy's lerp

  const std::vector<double> b = {15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(ExactQuantile(b, 0.25), 20.0);
  EXPECT_DOUBLE_EQ(ExactQuantile(b, 0.4), 29.0);
  EXPECT_DOUBLE_EQ(ExactQuantile(b, 0.5), 35.0);

  const std::vector<double> c = {-1, 0, 2, 3.5, 10};
  EXPECT_DOUBLE_EQ(ExactQuantile(c, 0.1), -0.6);
  EXPECT_DOUBLE_EQ(ExactQuantile(c, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(ExactQuantile(c, 0.9), 7.4);
}

TEST(ExactQuantileTest, SingleValue) {
  const std::vector<double> a = {7.0};
  for (double q : {0.0, 0.3, 0.5, 1.0}) EXPECT_EQ(ExactQuantile(a, q), 7.0);
}

TEST(ExactQuantileTest, EmptyOrBadQIsNaN) {
  EXPECT_TRUE(std::isnan(ExactQuantile({}, 0.5)));
  const std::vector<double> a = {1, 2};
  EXPECT_TRUE(std::isnan(ExactQuantile(a, -0.01)));
  EXPECT_TRUE(std::isnan(ExactQuantile(a, 1.01)));
  EXPECT_TRUE(std::isnan(ExactQuantile(a, std::numeric_limits<double>::quiet_NaN())));
}

TEST(ExactPercentilesTest, UnsortedInputOneToHundred) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const Percentiles p = ExactPercentiles(v);
  EXPECT_DOUBLE_EQ(p.p50, 50.5);
  EXPECT_DOUBLE_EQ(p.p95, 95.05);
  EXPECT_DOUBLE_EQ(p.p99, 99.01);
  EXPECT_EQ(v.front(), 100);  // the caller's vector is untouched
}

TEST(ExactPercentilesTest, DropsNaNAndHandlesEmpty) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Percentiles p = ExactPercentiles({4, nan, 1, 3, 2});
  EXPECT_DOUBLE_EQ(p.p50, 2.5);
  const Percentiles e = ExactPercentiles({nan});
  EXPECT_TRUE(std::isnan(e.p50));
  EXPECT_TRUE(std::isnan(e.p95));
  EXPECT_TRUE(std::isnan(e.p99));
}

}  // namespace
}  // namespace opmap::stats
