// The store's sketch columns: accumulating stored sketches equals DDSketch::Merge of the
// originals, and damaged blobs are errors, never crashes.
#include "collector/store/sketch_columns.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::collector {
namespace {

using stats::DDSketch;

StoredSketch Stored(const DDSketch& s, const std::string& bins) {
  return StoredSketch{s.scale(), s.offset(), bins, s.zero_count(), s.sum(),
                      s.empty() ? 0 : s.min(), s.empty() ? 0 : s.max()};
}

TEST(SketchColumns, AccumulatingEqualsMerging) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> narrow(std::log(5000.0), 0.1);
  std::lognormal_distribution<double> wide(std::log(200000.0), 2.0);
  std::vector<DDSketch> parts(6);
  for (size_t i = 0; i < parts.size(); ++i) {
    for (int k = 0; k < 500; ++k) parts[i].Add(i % 2 ? narrow(rng) : wide(rng));
    if (i == 3) parts[i].Add(0, 7);  // zero bin
  }
  DDSketch merged;
  SketchAccumulator acc;
  std::vector<std::string> blobs;
  for (const DDSketch& p : parts) blobs.push_back(EncodeSketchBins(p));
  for (size_t i = 0; i < parts.size(); ++i) {
    ASSERT_TRUE(merged.Merge(parts[i]).ok());
    ASSERT_TRUE(acc.Add(Stored(parts[i], blobs[i])).ok());
  }
  absl::StatusOr<DDSketch> got = acc.Finish();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->count(), merged.count());
  EXPECT_EQ(got->zero_count(), merged.zero_count());
  EXPECT_EQ(got->offset(), merged.offset());
  EXPECT_EQ(got->bins(), merged.bins());
  EXPECT_EQ(got->min(), merged.min());
  EXPECT_EQ(got->max(), merged.max());
  EXPECT_NEAR(got->sum(), merged.sum(), 1e-9 * merged.sum());
  for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(got->Quantile(q), merged.Quantile(q));
}

TEST(SketchColumns, EmptyAccumulatorGivesEmptySketch) {
  SketchAccumulator acc;
  absl::StatusOr<DDSketch> s = acc.Finish();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
}

TEST(SketchColumns, DamagedBlobsAreDataLoss) {
  DDSketch s;
  for (int v = 1000; v < 2000; v += 10) s.Add(v);
  const std::string good = EncodeSketchBins(s);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    SketchAccumulator acc;
    EXPECT_EQ(acc.Add(Stored(s, good.substr(0, cut))).code(), absl::StatusCode::kDataLoss)
        << "cut " << cut;
  }
  SketchAccumulator trailing;
  EXPECT_EQ(trailing.Add(Stored(s, good + "x")).code(), absl::StatusCode::kDataLoss);
  StoredSketch far = Stored(s, good);
  far.offset = 1 << 30;
  SketchAccumulator acc;
  EXPECT_EQ(acc.Add(far).code(), absl::StatusCode::kDataLoss);
  // Parts that disagree with the bins (min above every value) fail at Finish.
  StoredSketch wrong = Stored(s, good);
  wrong.min = 1e9;
  wrong.max = 2e9;
  SketchAccumulator bad;
  ASSERT_TRUE(bad.Add(wrong).ok());
  EXPECT_FALSE(bad.Finish().ok());
}

TEST(SketchColumns, ScalesMustAgree) {
  DDSketch a;
  a.Add(10);
  DDSketch b = DDSketch::WithScale(4).value();
  b.Add(10);
  SketchAccumulator acc;
  ASSERT_TRUE(acc.Add(Stored(a, EncodeSketchBins(a))).ok());
  EXPECT_EQ(acc.Add(Stored(b, EncodeSketchBins(b))).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace opmap::collector
