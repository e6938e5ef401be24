#include "analysis/stats/value_counts.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::stats {
namespace {

// Many repeats of few values, some negative: the quantiles of the multiset equal
// ExactQuantile over the values written out, at every q.
TEST(ValueCountsTest, EqualsExactQuantileOverTheWrittenOutValues) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> pick(-50, 400);
  ValueCounts counts;
  std::vector<double> all;
  for (int i = 0; i < 5000; ++i) {
    int64_t v = pick(rng) * 1000;
    counts.Add(v);
    all.push_back(static_cast<double>(v));
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(counts.count(), 5000);
  EXPECT_LE(counts.distinct(), 451u);
  for (double q : {0.0, 0.01, 0.25, 0.5, 0.95, 0.99, 0.999, 1.0}) {
    EXPECT_EQ(counts.Quantile(q), ExactQuantile(all, q)) << "q=" << q;
  }
  Percentiles p = counts.ToPercentiles();
  Percentiles want = ExactPercentiles(all);
  EXPECT_EQ(p.p50, want.p50);
  EXPECT_EQ(p.p95, want.p95);
  EXPECT_EQ(p.p99, want.p99);
  EXPECT_FALSE(p.sketched);
}

TEST(ValueCountsTest, MergeEqualsOneRowOfEverything) {
  ValueCounts a, b, both;
  for (int64_t v : {5, 5, 9, 1, 30}) { a.Add(v); both.Add(v); }
  for (int64_t v : {9, 2, 2, 2, 100}) { b.Add(v); both.Add(v); }
  a.Merge(b);
  EXPECT_EQ(a.count(), 10);
  EXPECT_EQ(a.Sorted(), both.Sorted());
  EXPECT_EQ(a.Quantile(0.5), 5.0);  // 1 2 2 2 5 | 5 9 9 30 100 -> (5 + 5) / 2
  EXPECT_EQ(a.Quantile(0.95), ExactQuantile(std::vector<double>{1, 2, 2, 2, 5, 5, 9, 9, 30, 100}, 0.95));
}

TEST(ValueCountsTest, EmptyRowIsNaN) {
  ValueCounts empty;
  EXPECT_TRUE(std::isnan(empty.Quantile(0.5)));
  EXPECT_TRUE(std::isnan(empty.ToPercentiles().p99));
  ValueCounts one;
  one.Add(7, 3);
  EXPECT_EQ(one.Quantile(0.99), 7.0);
  EXPECT_TRUE(std::isnan(one.Quantile(1.5)));
}

// Past the budget the row that asked for one more entry becomes a sketch: within the
// sketch's relative accuracy (plus one rank), its entries given back, and it says so.
TEST(ValueCountsTest, PastTheBudgetTheRowIsSketchedWithinAlpha) {
  ValueBudget budget(100);
  ValueCounts small(&budget), big(&budget);
  for (int64_t v = 1; v <= 40; ++v) small.Add(v);
  std::vector<double> all;
  for (int64_t v = 1; v <= 10000; ++v) {
    big.Add(v * 37);
    all.push_back(static_cast<double>(v * 37));
  }
  EXPECT_FALSE(small.sketched());
  EXPECT_TRUE(big.sketched());
  EXPECT_EQ(budget.rows_sketched(), 1);
  EXPECT_EQ(budget.used(), 40u);  // only the exact row's entries
  EXPECT_EQ(big.count(), 10000);
  Percentiles p = big.ToPercentiles();
  EXPECT_TRUE(p.sketched);
  const double exact = ExactQuantile(all, 0.99);
  EXPECT_NEAR(p.p99, exact, exact * (DDSketch::kRelativeAccuracy + 1e-3));
  // The exact row keeps answering exactly.
  EXPECT_EQ(small.Quantile(0.5), 20.5);

  // Merging a sketched row sketches the receiver.
  ValueCounts other(&budget);
  other.Add(3);
  other.Merge(big);
  EXPECT_TRUE(other.sketched());
  EXPECT_EQ(other.count(), 10001);
}

TEST(ValueCountsTest, RowsWithNegativeValuesStayExact) {
  ValueBudget budget(4);
  ValueCounts gaps(&budget);
  for (int64_t v = -5; v < 20; ++v) gaps.Add(v);
  EXPECT_FALSE(gaps.sketched());
  EXPECT_EQ(gaps.distinct(), 25u);
  EXPECT_EQ(gaps.Quantile(0.5), 7.0);
}

}  // namespace
}  // namespace opmap::stats
