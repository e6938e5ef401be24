// Mann–Whitney U against scipy 1.10.1:
//   scipy.stats.mannwhitneyu(candidate, baseline, alternative='two-sided',
//                            method='asymptotic', use_continuity=True)
// (statistic = U of the candidate), plus hand-checked ranks on the tiny sample.
#include "analysis/release/mann_whitney.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

std::vector<WeightedValue> Exact(const std::vector<double>& v) {
  std::vector<WeightedValue> out;
  for (double x : v) out.push_back({x, 1});
  return out;
}

TEST(MannWhitney, TinySampleMatchesHandAndScipy) {
  // Pooled: 1 2 3 3 4 4 5 5 6 7 8 → candidate ranks 3.5+5.5+7.5+9+10+11 = 46.5,
  // U = 46.5 − 6·7/2 = 25.5. Ties: three pairs, Σ(t³−t) = 18;
  // σ² = 5·6/12·(12 − 18/110); z = (25.5 − 15 − 0.5)/σ = 1.83832.
  absl::StatusOr<MannWhitneyResult> r =
      MannWhitneyU(Exact({1, 2, 3, 4, 5}), Exact({3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->n_baseline, 5u);
  EXPECT_EQ(r->n_candidate, 6u);
  EXPECT_DOUBLE_EQ(r->u_candidate, 25.5);
  EXPECT_NEAR(r->z, 10 / std::sqrt(2.5 * (12 - 18.0 / 110)), 1e-12);
  EXPECT_NEAR(r->z, 1.8383188740373877, 1e-12);
  EXPECT_NEAR(r->p_value, 0.066015431521231, 1e-12);  // scipy
  EXPECT_DOUBLE_EQ(r->effect, 25.5 / 30);
}

TEST(MannWhitney, SymmetricWhenArmsSwap) {
  auto a = Exact({1, 2, 3, 4, 5});
  auto b = Exact({3, 4, 5, 6, 7, 8});
  absl::StatusOr<MannWhitneyResult> ab = MannWhitneyU(a, b);
  absl::StatusOr<MannWhitneyResult> ba = MannWhitneyU(b, a);
  ASSERT_TRUE(ab.ok() && ba.ok());
  EXPECT_DOUBLE_EQ(ab->u_candidate + ba->u_candidate, 30);  // U1 + U2 = n1·n2
  EXPECT_DOUBLE_EQ(ab->z, -ba->z);
  EXPECT_DOUBLE_EQ(ab->p_value, ba->p_value);
  EXPECT_DOUBLE_EQ(ab->effect, 1 - ba->effect);
}

TEST(MannWhitney, WeightedTiesEqualExpandedSamples) {
  // baseline 1,1,2,2,3 and candidate 2,2,3,3,4 as (value, count) bins.
  std::vector<WeightedValue> base = {{2, 2}, {1, 2}, {3, 1}};  // order does not matter
  std::vector<WeightedValue> cand = {{2, 2}, {3, 2}, {4, 1}, {9, 0}};  // weight 0: ignored
  absl::StatusOr<MannWhitneyResult> w = MannWhitneyU(base, cand);
  absl::StatusOr<MannWhitneyResult> e =
      MannWhitneyU(Exact({1, 1, 2, 2, 3}), Exact({2, 2, 3, 3, 4}));
  ASSERT_TRUE(w.ok() && e.ok());
  EXPECT_EQ(w->n_candidate, 5u);
  EXPECT_DOUBLE_EQ(w->u_candidate, 20.0);  // scipy
  EXPECT_NEAR(w->p_value, 0.12512238701328704, 1e-12);  // scipy
  EXPECT_DOUBLE_EQ(w->effect, 0.8);
  EXPECT_DOUBLE_EQ(w->u_candidate, e->u_candidate);
  EXPECT_DOUBLE_EQ(w->z, e->z);
  EXPECT_DOUBLE_EQ(w->p_value, e->p_value);
}

TEST(MannWhitney, IdenticalSamplesGivePOne) {
  absl::StatusOr<MannWhitneyResult> r = MannWhitneyU(Exact({1, 2, 3}), Exact({1, 2, 3}));
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->u_candidate, 4.5);
  EXPECT_EQ(r->z, 0);
  EXPECT_EQ(r->p_value, 1);
  EXPECT_DOUBLE_EQ(r->effect, 0.5);
  // All values equal: zero variance, still p = 1 (not NaN).
  absl::StatusOr<MannWhitneyResult> flat = MannWhitneyU({{5, 3}}, {{5, 2}});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->p_value, 1);
  EXPECT_EQ(flat->z, 0);
  EXPECT_DOUBLE_EQ(flat->effect, 0.5);
}

TEST(MannWhitney, SeparatedSamplesGiveTinyP) {
  std::vector<double> b, c;
  for (int i = 1; i <= 60; ++i) b.push_back(i);
  for (int i = 61; i <= 120; ++i) c.push_back(i);
  absl::StatusOr<MannWhitneyResult> r = MannWhitneyU(Exact(b), Exact(c));
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->u_candidate, 3600);
  EXPECT_DOUBLE_EQ(r->effect, 1);
  EXPECT_GT(r->z, 0);
  EXPECT_NEAR(r->p_value / 3.5565709749847226e-21, 1, 1e-9);  // scipy
}

TEST(MannWhitney, LatencyShiftMatchesScipy) {
  // 200 latencies (10 + 0.05 i) ms in ns, and the same × 1.2 and × 1.055 (the release
  // tests' arms). In ns, floating-point products make a few ties that the same values in
  // ms would not: scipy was given these exact doubles.
  std::vector<double> b, c20, c55;
  for (int i = 0; i < 200; ++i) {
    b.push_back((10 + 0.05 * i) * 1e6);
    c20.push_back(b.back() * 1.2);
    c55.push_back(b.back() * 1.055);
  }
  absl::StatusOr<MannWhitneyResult> r = MannWhitneyU(Exact(b), Exact(c20));
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->u_candidate, 29319.0);
  EXPECT_NEAR(r->p_value / 7.629563756631408e-16, 1, 1e-9);
  EXPECT_DOUBLE_EQ(r->effect, 0.732975);
  absl::StatusOr<MannWhitneyResult> s = MannWhitneyU(Exact(b), Exact(c55));
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->u_candidate, 23066.5);
  EXPECT_NEAR(s->p_value, 0.008003522295830758, 1e-12);
}

TEST(MannWhitney, RejectsEmptyAndNonFinite) {
  EXPECT_FALSE(MannWhitneyU({}, Exact({1})).ok());
  EXPECT_FALSE(MannWhitneyU(Exact({1}), {}).ok());
  EXPECT_FALSE(MannWhitneyU(Exact({1}), {{2, 0}}).ok());  // only zero weights: empty
  EXPECT_FALSE(MannWhitneyU(Exact({1, std::nan("")}), Exact({1})).ok());
  EXPECT_FALSE(
      MannWhitneyU(Exact({1}), Exact({std::numeric_limits<double>::infinity()})).ok());
}

}  // namespace
}  // namespace opmap::analysis
