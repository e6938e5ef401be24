// DDSketch mapping, accuracy, merge and collapse. Serialization is in
// ddsketch_serialize_unittest.cc.
#include "analysis/stats/ddsketch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <ctime>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::stats {
namespace {

constexpr double kAlpha = DDSketch::kRelativeAccuracy;
// Bin boundaries are rounded doubles: allow a few ulps on top of α.
constexpr double kTolerance = kAlpha + 1e-14;
const std::vector<double> kQuantiles = {0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1};

// The value the sketch estimates: position floor(q * (n - 1)) of the sorted values,
// computed with the same double expression as DDSketch::Quantile.
double LowerRankQuantile(const std::vector<double>& sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  return sorted[static_cast<size_t>(rank)];
}

DDSketch SketchOf(const std::vector<double>& values) {
  DDSketch s;
  for (double v : values) s.Add(v);
  return s;
}

// Every quantile in kQuantiles is within α of the exact lower-rank quantile.
void ExpectAccurate(const std::vector<double>& values) {
  const DDSketch s = SketchOf(values);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double q : kQuantiles) {
    const double want = LowerRankQuantile(sorted, q);
    const double got = s.Quantile(q);
    if (want <= 0) {
      EXPECT_EQ(got, std::clamp(0.0, sorted.front(), sorted.back())) << "q=" << q;
    } else {
      EXPECT_LE(std::abs(got - want), kTolerance * want) << "q=" << q << " want=" << want;
    }
  }
}

void ExpectSameSketch(const DDSketch& a, const DDSketch& b) {
  EXPECT_EQ(a.scale(), b.scale());
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.zero_count(), b.zero_count());
  EXPECT_EQ(a.offset(), b.offset());
  EXPECT_EQ(a.bins(), b.bins());
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  // Addition order differs between split and whole: the sum may differ in last bits.
  EXPECT_NEAR(a.sum(), b.sum(), 1e-12 * std::abs(b.sum()));
  for (double q = 0; q <= 1.0; q += 0.001) EXPECT_EQ(a.Quantile(q), b.Quantile(q)) << q;
}

std::vector<double> Lognormal(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(std::log(1e5), 1.5);  // ~100 µs in ns
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// 10^U(lo, hi): log-uniform over [10^lo, 10^hi].
std::vector<double> LogUniform(size_t n, double lo, double hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = std::pow(10.0, d(rng));
  return v;
}

TEST(DDSketchMappingTest, RelativeAccuracyIsExact) {
  const long double g = std::exp2(1.0L / 64);
  EXPECT_NEAR(kAlpha, static_cast<double>((g - 1) / (g + 1)), 1e-18);
  EXPECT_NEAR(kAlpha, 0.005415159415902569, 1e-18);
  EXPECT_EQ(DDSketch().relative_accuracy(), kAlpha);
  EXPECT_NEAR(DDSketch::WithScale(0)->relative_accuracy(), 1.0 / 3, 1e-16);  // γ = 2
}

TEST(DDSketchMappingTest, PowersOfTwoCloseABin) {
  DDSketch s;
  for (int e = -1074; e <= 1023; ++e) {
    const double v = std::ldexp(1.0, e);
    ASSERT_EQ(s.IndexOf(v), 64 * e - 1) << e;
    // Above a subnormal power of two the next double is 2^e + 2^-1074, coarser.
    if (e >= -1022) {
      ASSERT_EQ(s.IndexOf(std::nextafter(v, 1e308)), 64 * e) << e;
    }
  }
  EXPECT_EQ(s.IndexOf(std::numeric_limits<double>::max()), 64 * 1023 + 63);
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(s.IndexOf(bad), std::numeric_limits<int32_t>::min());
  }
}

TEST(DDSketchMappingTest, MatchesLog2FormulaAwayFromBoundaries) {
  DDSketch s;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-1070, 1020);
  for (int i = 0; i < 1'000'000; ++i) {
    const double v = std::exp2(exponent(rng));
    const long double x = std::log2(static_cast<long double>(v)) * 64;
    const long double nearest = std::nearbyint(x);
    if (std::abs(x - nearest) < 1e-9L) continue;  // within rounding of a boundary
    ASSERT_EQ(s.IndexOf(v), static_cast<int32_t>(std::ceil(x)) - 1) << v;
  }
}

TEST(DDSketchMappingTest, BinValueIsInItsBinAndWithinAlpha) {
  for (int scale = 0; scale <= 6; ++scale) {
    const DDSketch s = *DDSketch::WithScale(scale);
    // Normal range only: subnormal bin values are rounded to multiples of 2^-1074.
    const int32_t lo = s.IndexOf(std::numeric_limits<double>::min()) + 1;
    const int32_t hi = s.IndexOf(std::numeric_limits<double>::max()) - 1;
    for (int32_t i = lo; i <= hi; ++i) ASSERT_EQ(s.IndexOf(s.BinValue(i)), i) << scale;
  }
  DDSketch s;
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> exponent(-1000, 1000);
  double worst = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const double v = std::exp2(exponent(rng));
    worst = std::max(worst, std::abs(s.BinValue(s.IndexOf(v)) - v) / v);
  }
  EXPECT_LE(worst, kTolerance);
  EXPECT_GT(worst, 0.99 * kAlpha);  // the bound is tight, not loose
}

TEST(DDSketchMappingTest, CoarserScalesShiftTheScale6Index) {
  const DDSketch s6;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> exponent(-60, 60);
  for (int scale = 0; scale < 6; ++scale) {
    const DDSketch s = *DDSketch::WithScale(scale);
    for (int i = 0; i < 10000; ++i) {
      const double v = std::exp2(exponent(rng));
      ASSERT_EQ(s.IndexOf(v), s6.IndexOf(v) >> (6 - scale));
    }
  }
  EXPECT_EQ(DDSketch::WithScale(0)->IndexOf(3.0), 1);  // (2, 4]
  EXPECT_FALSE(DDSketch::WithScale(7).ok());
  EXPECT_FALSE(DDSketch::WithScale(-1).ok());
}

TEST(DDSketchAccuracyTest, Uniform) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> d(0, 1e6);
  std::vector<double> v(100000);
  for (double& x : v) x = d(rng);
  ExpectAccurate(v);
}

TEST(DDSketchAccuracyTest, Lognormal) { ExpectAccurate(Lognormal(100000, 2)); }

TEST(DDSketchAccuracyTest, HeavyTailedPareto) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(100000);
  for (double& x : v) x = 1000.0 / std::pow(1.0 - u(rng), 1.0 / 1.1);  // shape 1.1
  ExpectAccurate(v);
}

TEST(DDSketchAccuracyTest, Constant) {
  ExpectAccurate(std::vector<double>(1000, 42.0));
  const DDSketch s = SketchOf(std::vector<double>(1000, 42.0));
  EXPECT_EQ(s.bins().size(), 1u);
  for (double q : kQuantiles) EXPECT_EQ(s.Quantile(q), 42.0);  // clamped to [min, max]
}

TEST(DDSketchAccuracyTest, SmallSamples) {
  ExpectAccurate({5.0});
  ExpectAccurate({5.0, 1e9});
  ExpectAccurate({3, 1, 2});
}

// 1 ns .. 4e9 ns (4 s) spans 2043 bins: the widest range that fits without folding.
TEST(DDSketchAccuracyTest, OneNanosecondToFourSeconds) {
  std::vector<double> v = LogUniform(100000, 0, std::log10(4e9), 4);
  v.push_back(1.0);
  v.push_back(4e9);
  ExpectAccurate(v);
  EXPECT_LE(SketchOf(v).bins().size(), DDSketch::kMaxBins);
}

// 1 ns .. 1e12 ns needs 2555 bins at scale 6: more than kMaxBins, so the bins below
// 1e12 / 2^32 ≈ 233 ns fold. Ranks above the fold keep α; ranks inside it are
// overestimated up to the lowest kept bin; min, max and q = 0, 1 stay exact.
TEST(DDSketchCollapseTest, OneNanosecondToTwelveDecades) {
  std::vector<double> v = LogUniform(200000, 0, 12, 5);
  v.push_back(1.0);
  v.push_back(1e12);
  const DDSketch s = SketchOf(v);
  ASSERT_EQ(s.bins().size(), DDSketch::kMaxBins);
  double sum = 0;
  for (double x : v) sum += x;
  EXPECT_EQ(s.count(), v.size());
  EXPECT_EQ(s.sum(), sum);  // same addition order: bit-identical
  EXPECT_EQ(s.min(), 1.0);
  EXPECT_EQ(s.max(), 1e12);
  std::sort(v.begin(), v.end());
  const double fold_value = s.BinValue(s.offset());
  for (double q : kQuantiles) {
    const double want = LowerRankQuantile(v, q);
    const double got = s.Quantile(q);
    if (s.IndexOf(want) < s.offset()) {  // this rank was folded
      EXPECT_GE(got, want) << q;
      EXPECT_LE(got, fold_value) << q;
    } else {
      EXPECT_LE(std::abs(got - want), kTolerance * want) << q;
    }
  }
  EXPECT_EQ(s.Quantile(0), 1.0);
  EXPECT_EQ(s.Quantile(1), 1e12);
}

TEST(DDSketchCollapseTest, InsertionOrderDoesNotMatter) {
  std::vector<double> v = LogUniform(50000, -2, 14, 6);
  const DDSketch random = SketchOf(v);
  std::sort(v.begin(), v.end());
  const DDSketch ascending = SketchOf(v);
  std::reverse(v.begin(), v.end());
  const DDSketch descending = SketchOf(v);
  ASSERT_EQ(random.bins().size(), DDSketch::kMaxBins);
  ExpectSameSketch(random, ascending);
  ExpectSameSketch(random, descending);
  EXPECT_NE(random.bins().front(), 0u);
  EXPECT_NE(random.bins().back(), 0u);
}

TEST(DDSketchZeroTest, ZerosAndNegativesGoToTheZeroBin) {
  std::vector<double> v = Lognormal(7000, 10);
  v.insert(v.end(), 3000, 0.0);
  ExpectAccurate(v);
  const DDSketch s = SketchOf(v);
  EXPECT_EQ(s.zero_count(), 3000u);
  EXPECT_EQ(s.Quantile(0.1), 0.0);
  EXPECT_EQ(s.Quantile(0.29), 0.0);
  EXPECT_GT(s.Quantile(0.31), 0.0);

  DDSketch neg;
  neg.Add(-5.0);
  neg.Add(0.0);
  neg.Add(-0.0);
  EXPECT_EQ(neg.zero_count(), 3u);
  EXPECT_TRUE(neg.bins().empty());
  EXPECT_EQ(neg.min(), -5.0);
  EXPECT_EQ(neg.sum(), -5.0);
  EXPECT_EQ(neg.Quantile(0.5), 0.0);
  EXPECT_EQ(neg.Quantile(0), -5.0);
}

TEST(DDSketchAddTest, IgnoresNonFiniteAndZeroCount) {
  DDSketch s;
  s.Add(std::numeric_limits<double>::quiet_NaN());
  s.Add(std::numeric_limits<double>::infinity());
  s.Add(-std::numeric_limits<double>::infinity());
  s.Add(3.0, 0);
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(std::isnan(s.Quantile(0.5)));
  EXPECT_TRUE(std::isnan(s.min()));
  EXPECT_TRUE(std::isnan(s.max()));
  s.Add(3.0);
  EXPECT_TRUE(std::isnan(s.Quantile(-0.5)));
  EXPECT_TRUE(std::isnan(s.Quantile(1.5)));
  EXPECT_TRUE(std::isnan(s.Quantile(std::numeric_limits<double>::quiet_NaN())));
}

TEST(DDSketchAddTest, WeightedAddEqualsRepeatedAdd) {
  DDSketch a, b;
  for (double v : {1.0, 10.0, 0.0, 1e6}) {
    a.Add(v, 5);
    for (int i = 0; i < 5; ++i) b.Add(v);
  }
  ExpectSameSketch(a, b);
}

TEST(DDSketchAddTest, SubnormalsAreBinned) {
  DDSketch s;
  s.Add(1e-312);  // a span of 2^6.6, no folding
  s.Add(1e-310);
  s.Add(1e-310);
  EXPECT_EQ(s.IndexOf(std::numeric_limits<double>::denorm_min()), -64 * 1074 - 1);
  // A subnormal BinValue has fewer significant bits (~2^-44 relative here).
  EXPECT_LE(std::abs(s.Quantile(0.5) - 1e-310), (kAlpha + 1e-12) * 1e-310);
  EXPECT_EQ(s.Quantile(0), 1e-312);
}

TEST(DDSketchMergeTest, SplitThenMergeEqualsWhole) {
  for (const std::vector<double>& v : {Lognormal(30000, 11), LogUniform(30000, -3, 15, 12)}) {
    DDSketch parts[3];
    for (size_t i = 0; i < v.size(); ++i) parts[(i * 7919) % 3].Add(v[i]);
    DDSketch merged;
    for (const DDSketch& p : parts) ASSERT_TRUE(merged.Merge(p).ok());
    ExpectSameSketch(merged, SketchOf(v));
  }
}

TEST(DDSketchMergeTest, AssociativeAndCommutative) {
  // Disjoint ranges, so merges grow the range both up and down and fold.
  const DDSketch a = SketchOf(LogUniform(5000, 0, 4, 13));
  const DDSketch b = SketchOf(LogUniform(5000, 8, 12, 14));
  const DDSketch c = SketchOf(LogUniform(5000, -4, 1, 15));
  DDSketch ab = a, bc = b, ca = c;
  ASSERT_TRUE(ab.Merge(b).ok());
  ASSERT_TRUE(bc.Merge(c).ok());
  ASSERT_TRUE(ca.Merge(a).ok());
  DDSketch ab_c = ab, a_bc = a, ca_b = ca, cb_a = c;
  ASSERT_TRUE(ab_c.Merge(c).ok());
  ASSERT_TRUE(a_bc.Merge(bc).ok());
  ASSERT_TRUE(ca_b.Merge(b).ok());
  ASSERT_TRUE(cb_a.Merge(b).ok());
  ASSERT_TRUE(cb_a.Merge(a).ok());
  ExpectSameSketch(ab_c, a_bc);
  ExpectSameSketch(ab_c, ca_b);
  ExpectSameSketch(ab_c, cb_a);
}

TEST(DDSketchMergeTest, EmptySelfAndScaleMismatch) {
  const DDSketch a = SketchOf(Lognormal(1000, 16));
  DDSketch x = a;
  ASSERT_TRUE(x.Merge(DDSketch()).ok());
  ExpectSameSketch(x, a);
  DDSketch empty;
  ASSERT_TRUE(empty.Merge(a).ok());
  ExpectSameSketch(empty, a);

  DDSketch twice = a;
  ASSERT_TRUE(twice.Merge(twice).ok());
  DDSketch expected = a;
  ASSERT_TRUE(expected.Merge(DDSketch(a)).ok());
  ExpectSameSketch(twice, expected);

  DDSketch coarse = *DDSketch::WithScale(4);
  coarse.Add(1.0);
  const absl::Status st = x.Merge(coarse);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(x.count(), a.count());  // unchanged on error
}

// Thread CPU time, not wall time: the build machines are shared and a preempted
// loop would otherwise report the neighbours' load.
double CpuNanos() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// Not an assertion: prints ns per Add so regressions are visible in test logs.
TEST(DDSketchSpeedTest, ReportNanosecondsPerAdd) {
  const std::vector<double> v = Lognormal(1 << 16, 17);
  constexpr int kRounds = 200;  // 13M adds
  DDSketch s;
  for (double x : v) s.Add(x);  // establish the range: steady state afterwards
  const auto t0 = CpuNanos();
  for (int r = 0; r < kRounds; ++r)
    for (double x : v) s.Add(x);
  const auto t1 = CpuNanos();
  // The same loop over the std::log2 formula, for comparison with the table lookup.
  int64_t sink = 0;
  for (int r = 0; r < kRounds; ++r)
    for (double x : v) sink += static_cast<int64_t>(std::ceil(std::log2(x) * 64)) - 1;
  const auto t2 = CpuNanos();
  int64_t sink2 = 0;
  for (int r = 0; r < kRounds; ++r)
    for (double x : v) sink2 += s.IndexOf(x);
  const auto t3 = CpuNanos();
  const double n = static_cast<double>(kRounds) * v.size();
  auto ns = [n](double d) { return d / n; };
  std::printf("DDSketch::Add %.2f ns/op; IndexOf %.2f ns/op; ceil(log2(v)*64)-1 %.2f ns/op\n",
              ns(t1 - t0), ns(t3 - t2), ns(t2 - t1));
  RecordProperty("add_ns", std::to_string(ns(t1 - t0)));
  volatile int64_t keep = sink + sink2;  // keeps both loops alive
  (void)keep;
  EXPECT_EQ(s.count(), v.size() * (kRounds + 1));
}

}  // namespace
}  // namespace opmap::stats
