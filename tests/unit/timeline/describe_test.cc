#include "analysis/timeline/describe.h"

#include <cmath>
#include <vector>

#include "analysis/stats/value_counts.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(DescribeTest, EmptyIsAllZero) {
  DescriptiveStats s = Describe({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.p50, 0);
  EXPECT_EQ(s.max, 0);
}

// Past its budget a row is a DDSketch (relative accuracy 0.54%): quantiles, min and max
// come from the sketch, the mean from its exact sum, and there is no standard deviation.
TEST(DescribeTest, SketchedRowAnswersFromItsSketch) {
  stats::ValueBudget budget(4);
  stats::ValueCounts values(&budget);
  for (int64_t v = 1; v <= 1000; ++v) values.Add(v * 1000);
  ASSERT_TRUE(values.sketched());
  DescriptiveStats s = DescribeCounts(values);
  EXPECT_EQ(s.count, 1000);
  EXPECT_DOUBLE_EQ(s.mean, 500500.0);
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_NEAR(s.p50, 500500, 500500 * 0.011);
  EXPECT_NEAR(s.p99, 990010, 990010 * 0.011);
  EXPECT_NEAR(s.min, 1000, 1000 * 0.011);
  EXPECT_NEAR(s.max, 1000000, 1000000 * 0.011);
  EXPECT_LT(s.p25, s.p50);
  EXPECT_LT(s.p75, s.p95);
}

TEST(DescribeTest, SingleValueHasZeroStddev) {
  DescriptiveStats s = Describe({42});
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.mean, 42);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.min, 42);
  EXPECT_EQ(s.p25, 42);
  EXPECT_EQ(s.p99, 42);
  EXPECT_EQ(s.max, 42);
}

// pandas.Series([4, 1, 3, 2]).describe(percentiles=[.25, .5, .75, .95, .99])
TEST(DescribeTest, MatchesPandasLinearInterpolation) {
  DescriptiveStats s = Describe({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, 1.2909944487358056, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p25, 1.75);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p75, 3.25);
  EXPECT_NEAR(s.p95, 3.85, 1e-12);
  EXPECT_NEAR(s.p99, 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 4);
}

TEST(DescribeTest, QuantilesInterpolateBetweenClosestRanks) {
  DescriptiveStats s = Describe({40, 10, 20});
  EXPECT_DOUBLE_EQ(s.min, 10);
  EXPECT_DOUBLE_EQ(s.p50, 20);
  EXPECT_DOUBLE_EQ(s.p75, 30);
  EXPECT_DOUBLE_EQ(s.max, 40);
}

}  // namespace
}  // namespace opmap::analysis
