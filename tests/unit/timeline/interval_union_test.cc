#include "analysis/timeline/interval_union.h"

#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

int64_t Length(std::vector<Interval> v) { return UnionLength(absl::MakeSpan(v)); }

TEST(UnionLengthTest, EmptyIsZero) { EXPECT_EQ(Length({}), 0); }

TEST(UnionLengthTest, DisjointIntervalsAdd) { EXPECT_EQ(Length({{0, 10}, {20, 30}}), 20); }

TEST(UnionLengthTest, OverlapCountsOnce) { EXPECT_EQ(Length({{0, 10}, {5, 20}}), 20); }

TEST(UnionLengthTest, NestedIntervalsAddNothing) {
  EXPECT_EQ(Length({{0, 100}, {10, 20}, {30, 40}, {99, 100}}), 100);
}

TEST(UnionLengthTest, TouchingIntervals) { EXPECT_EQ(Length({{0, 5}, {5, 9}}), 9); }

TEST(UnionLengthTest, ZeroLengthAndInvertedContributeNothing) {
  EXPECT_EQ(Length({{5, 5}, {9, 3}}), 0);
  EXPECT_EQ(Length({{5, 5}, {0, 10}, {20, 20}}), 10);
}

TEST(UnionLengthTest, UnsortedInputIsSortedInPlace) {
  std::vector<Interval> v = {{30, 40}, {0, 10}, {5, 20}};
  EXPECT_EQ(UnionLength(absl::MakeSpan(v)), 30);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].start_ns, 0);
  EXPECT_EQ(v[1].start_ns, 5);
  EXPECT_EQ(v[2].start_ns, 30);
}

TEST(UnionLengthTest, LargeEpochTimestamps) {
  const int64_t base = 1'419'247'333'430'849'000;  // epoch ns
  EXPECT_EQ(Length({{base, base + 3136}, {base + 1000, base + 5000}}), 5000);
}

TEST(MergeIntervalsTest, MergesOverlappingAndTouchingDropsEmpty) {
  std::vector<Interval> m = MergeIntervals({{20, 30}, {0, 5}, {5, 9}, {25, 40}, {50, 50}, {60, 55}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].start_ns, 0);
  EXPECT_EQ(m[0].end_ns, 9);
  EXPECT_EQ(m[1].start_ns, 20);
  EXPECT_EQ(m[1].end_ns, 40);
}

TEST(MergeIntervalsTest, EmptyInput) { EXPECT_TRUE(MergeIntervals({}).empty()); }

}  // namespace
}  // namespace opmap::analysis
