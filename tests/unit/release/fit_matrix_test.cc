// analysis/release/load_curve.h, fit_matrix.h and risk_map.h on arms built by hand: each
// window is one load point at a rate and p99 the test sets, so every knee, verdict and
// ranking asserted here follows from the numbers below.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "analysis/release/fit_matrix.h"
#include "analysis/release/load_curve.h"
#include "analysis/release/risk_map.h"
#include "gtest/gtest.h"
#include "tests/unit/release/release_fixture.h"

namespace opmap::analysis::release_test {
namespace {

struct Step {
  double rps;
  double p99_ms;
  double watts;  // 0: no power reading for the window
};

// One 10 s window per step, in the order given (not sorted: the curve sorts).
Arm LadderArm(const std::string& gpu, const std::vector<Step>& steps) {
  Arm a;
  a.key = "gpu_name";
  a.revision = gpu;
  int64_t t = kStart;
  for (size_t i = 0; i < steps.size(); ++i) {
    ArmWindow w;
    w.id = gpu + "/w" + std::to_string(i);
    w.start_ns = t;
    w.end_ns = t + 10 * kSecond;
    t = w.end_ns + kSecond;
    w.requests = static_cast<uint64_t>(steps[i].rps * 10);
    w.p50_ns = steps[i].p99_ms * 0.5 * kMs;
    w.p95_ns = steps[i].p99_ms * 0.9 * kMs;
    w.p99_ns = steps[i].p99_ms * kMs;
    if (steps[i].watts > 0) {
      w.gpu_watts = steps[i].watts;
      w.requests_per_joule = steps[i].rps / steps[i].watts;
    }
    a.windows.push_back(w);
    for (int k = 0; k < static_cast<int>(w.requests); ++k) {
      a.latencies_ns.push_back({steps[i].p99_ms * 0.5 * kMs, 1});
    }
  }
  a.requests = a.latencies_ns.size();
  // Whole-arm percentiles: the slowest step's (the comparison triggers need them).
  for (const ArmWindow& w : a.windows) {
    for (auto [arm, win] : {std::pair{&a.p50_ns, w.p50_ns}, {&a.p95_ns, w.p95_ns}, {&a.p99_ns, w.p99_ns}}) {
      *arm = std::max(arm->value_or(0), *win);
    }
  }
  return a;
}

WorkloadProfile Sla(double p99_ms) {
  WorkloadProfile p;
  p.model = "m";
  p.sla_p99_ms = p99_ms;
  return p;
}

TEST(LoadCurve, KneeIsTheHighestThroughputWindowMeetingTheSla) {
  const WorkloadProfile p = Sla(10);
  // Out of order on purpose; 300 req/s breaks the SLA, 200 meets it.
  const Arm a = LadderArm("A", {{300, 40, 0}, {100, 4, 0}, {200, 9.5, 0}});
  const LoadCurve c = BuildLoadCurve(a, &p);
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_DOUBLE_EQ(c.points[0].throughput_rps, 100);
  EXPECT_DOUBLE_EQ(c.points[2].throughput_rps, 300);
  ASSERT_TRUE(c.knee.has_value());
  EXPECT_EQ(*c.knee, 1u);
  EXPECT_DOUBLE_EQ(c.points[1].throughput_rps, 200);
  EXPECT_TRUE(c.points[1].meets_sla);
  EXPECT_FALSE(c.points[2].meets_sla);
}

TEST(LoadCurve, NoSlaOrNoWindowMeetingItIsSaid) {
  const Arm a = LadderArm("A", {{100, 40, 0}, {200, 60, 0}});
  EXPECT_EQ(BuildLoadCurve(a, nullptr).knee_unavailable, "no sla_p99_ms in the workload profile");
  const WorkloadProfile p = Sla(10);
  const LoadCurve c = BuildLoadCurve(a, &p);
  EXPECT_FALSE(c.knee.has_value());
  EXPECT_TRUE(absl::StrContains(c.knee_unavailable, "lowest p99 is 40.00 ms at 100.0 req/s"))
      << c.knee_unavailable;
}

TEST(LoadCurve, P95SlaAlsoBinds) {
  WorkloadProfile p = Sla(10);
  p.sla_p95_ms = 5;  // p95 = 0.9 × p99 in LadderArm
  const Arm a = LadderArm("A", {{100, 5, 0}, {200, 8, 0}});
  const LoadCurve c = BuildLoadCurve(a, &p);
  ASSERT_TRUE(c.knee.has_value());
  EXPECT_DOUBLE_EQ(c.points[*c.knee].throughput_rps, 100);  // 200's p95 is 7.2 ms
}

FitInputs TwoPlatforms(const WorkloadProfile* p) {
  FitInputs in;
  in.profile = p;
  FitArm fast, slow;
  fast.arm = LadderArm("H100", {{100, 3, 400}, {200, 4, 400}, {400, 8, 400}, {800, 90, 400}});
  slow.arm = LadderArm("L40S", {{100, 5, 200}, {200, 9, 200}, {400, 70, 200}, {800, 300, 200}});
  slow.layers = {{"matmul", BottleneckClass::kComputeBound, 5'000'000, 0.9, "U_c 0.71 ≥ 0.6"},
                 {"norm", BottleneckClass::kUnclassified, 1'000'000, 1.0, "no DRAM byte count"}};
  fast.layers_unavailable = "the arm's windows hold no GPU kernels";
  in.arms.push_back(std::move(slow));
  in.arms.push_back(std::move(fast));
  return in;
}

TEST(FitMatrix, TheArmWithTheHigherKneeWinsAndTheOtherSaysWhy) {
  const WorkloadProfile p = Sla(10);
  const FitInputs in = TwoPlatforms(&p);
  const FitResult fit = BuildFit(in);
  ASSERT_EQ(fit.rows.size(), 2u);
  const FitRow& slow = fit.rows[0];
  const FitRow& fast = fit.rows[1];
  EXPECT_EQ(fast.arm, "gpu_name=H100");
  ASSERT_TRUE(fast.knee_rps && slow.knee_rps);
  EXPECT_DOUBLE_EQ(*fast.knee_rps, 400);
  EXPECT_DOUBLE_EQ(*slow.knee_rps, 200);
  EXPECT_DOUBLE_EQ(*fast.p99_ns, 8 * kMs);
  EXPECT_DOUBLE_EQ(*fast.requests_per_joule, 1.0);  // 400 req/s at 400 W
  EXPECT_DOUBLE_EQ(*slow.requests_per_joule, 1.0);  // 200 req/s at 200 W
  EXPECT_EQ(fast.verdict, FitVerdict::kFits);
  EXPECT_EQ(slow.verdict, FitVerdict::kFits);
  ASSERT_TRUE(fit.best.has_value());
  EXPECT_EQ(*fit.best, 1u);
  ASSERT_TRUE(fit.runner_up.has_value());
  EXPECT_EQ(*fit.runner_up, 0u);
  ASSERT_EQ(fit.rejected.size(), 1u);
  EXPECT_EQ(fit.rejected[0],
            "gpu_name=L40S: knee 200.0 req/s against 400.0 req/s for gpu_name=H100 (50% lower)");
  // The slow arm compared with the best: its p99 is worse in every window.
  bool p99_fired = false;
  for (const Trigger& t : slow.triggers) p99_fired |= t.name == "p99 regression";
  EXPECT_TRUE(p99_fired);
}

TEST(FitMatrix, ATargetAboveTheKneeNeedsTheDominantLayersMitigation) {
  WorkloadProfile p = Sla(10);
  p.throughput_target = 300;
  const FitResult fit = BuildFit(TwoPlatforms(&p));
  const FitRow& slow = fit.rows[0];
  EXPECT_EQ(slow.verdict, FitVerdict::kFitsWithMitigation);
  EXPECT_EQ(slow.mitigation, "FP8 / GEMM tuning for matmul (compute-bound)");
  EXPECT_EQ(slow.mitigation_owner, "ML compiler engineer");
  // The fast arm meets 300 at its 400 knee; with no layer classes it would not be mitigable.
  EXPECT_EQ(fit.rows[1].verdict, FitVerdict::kFits);
  EXPECT_EQ(*fit.best, 1u);
}

TEST(FitMatrix, PowerBudgetAndEqualKneesFallToPerfPerWatt) {
  WorkloadProfile p = Sla(10);
  FitInputs in;
  in.profile = &p;
  FitArm a, b;
  a.arm = LadderArm("A", {{200, 5, 500}});
  b.arm = LadderArm("B", {{205, 5, 250}});  // within 5% of A's knee, half the power
  in.arms = {a, b};
  FitResult fit = BuildFit(in);
  EXPECT_EQ(fit.rows[*fit.best].arm, "gpu_name=B");
  EXPECT_TRUE(absl::StrContains(fit.rejected[0], "knee within 5% of gpu_name=B's, but 0.4 req/J against 0.82"))
      << fit.rejected[0];
  p.power_budget_w = 300;  // A draws 500 W: short of the budget and nothing to mitigate
  fit = BuildFit(in);
  EXPECT_EQ(fit.rows[0].verdict, FitVerdict::kDoesNotFit);
  EXPECT_TRUE(absl::StrContains(fit.rows[0].verdict_reason, "500.0 W at the knee is over the power budget 300 W"));
  const std::vector<Risk> risks = FitRisks(in, fit);
  bool budget = false;
  for (const Risk& r : risks) budget |= r.kind == "power budget" && r.arm == "gpu_name=A";
  EXPECT_TRUE(budget);
}

TEST(FitMatrix, WithoutAnSlaThereIsNoVerdictAndNoBest) {
  const FitResult fit = BuildFit(TwoPlatforms(nullptr));
  EXPECT_EQ(fit.rows[0].verdict, FitVerdict::kUnavailable);
  EXPECT_FALSE(fit.best.has_value());
  EXPECT_EQ(fit.best_reason, "no best platform: no sla_p99_ms in the workload profile");
}

TEST(FitMatrix, MbuForDecodeFromTheProfileAndTheArmsEnvelope) {
  WorkloadProfile p = Sla(10);
  p.parameters = 1e9;
  p.layers = 1;
  p.heads = 1;
  p.head_dim = 1;
  p.kv_heads = 1;
  p.hidden = 1;
  p.precision = Precision::kBf16;
  p.decode_tokens = 2;
  p.prefill_tokens = 0;
  FitInputs in = TwoPlatforms(&p);
  HardwareEnvelope e;
  e.name = "test GPU";
  e.hbm_bytes_per_s = 1e12;
  in.arms[1].envelope = e;
  const FitResult fit = BuildFit(in);
  // Per step: 2e9 weight bytes + KV 2·1·1·1·t·2 bytes (t = 0, 1) → 4e9 + 4 bytes per
  // request, × 400 req/s ÷ 1e12 B/s.
  ASSERT_TRUE(fit.rows[1].mbu.has_value()) << fit.rows[1].mbu_basis;
  EXPECT_NEAR(*fit.rows[1].mbu, (4e9 + 4) * 400 / 1e12, 1e-9);
  EXPECT_FALSE(fit.rows[0].mbu.has_value());
  EXPECT_EQ(fit.rows[0].mbu_basis, "no hardware envelope for the arm's GPU");
}

TEST(RiskMap, FitRisksNameOwnersMitigationsAndBoundaries) {
  const WorkloadProfile p = Sla(10);
  const FitInputs in = TwoPlatforms(&p);
  const std::vector<Risk> risks = FitRisks(in, BuildFit(in));
  const Risk* unclassified = nullptr;
  const Risk* trigger = nullptr;
  for (const Risk& r : risks) {
    if (r.kind == "unclassified evidence") unclassified = &r;
    if (r.subject == "p99 regression") trigger = &r;
  }
  ASSERT_NE(unclassified, nullptr);
  EXPECT_EQ(unclassified->arm, "gpu_name=L40S");
  EXPECT_EQ(unclassified->subject, "norm");
  EXPECT_EQ(unclassified->owner, "performance modeling owner");
  ASSERT_NE(trigger, nullptr);
  EXPECT_EQ(trigger->owner, "runtime systems engineer");
  EXPECT_EQ(trigger->rollback_boundary, "keep serving on gpu_name=H100");
}

TEST(RiskMap, ReleaseRisksCoverNearTriggersAndMissingPower) {
  Arm base = MakeArm("r1", 1.0);
  Arm cand = MakeArm("r2", 1.0);
  // No power in the candidate: perf/W is not evaluable, which is a risk of its own.
  for (ArmWindow& w : cand.windows) {
    w.gpu_watts.reset();
    w.requests_per_joule.reset();
  }
  cand.gpu_watts.reset();
  cand.requests_per_joule.reset();
  cand.unavailable["perf_per_watt"] = "no window of the arm has GPU power (NVML: not found)";
  // Slower samples overall (Mann–Whitney significant) but one window over the p99 bound:
  // the p99 trigger fires without holding (a near trigger).
  cand.latencies_ns = MakeArm("slower", 1.2).latencies_ns;
  cand.windows[1].p99_ns = 40 * kMs;
  const ReleaseInputs in = Inputs(base, cand);
  const Recommendation rec = Recommend(in);
  const std::vector<Risk> risks = ReleaseRisks(in, rec);
  bool power = false, near = false;
  for (const Risk& r : risks) {
    if (r.kind == "near trigger" && r.subject == "p99 regression") {
      near = true;
      EXPECT_EQ(r.owner, "runtime systems engineer");
      EXPECT_TRUE(absl::StrContains(r.evidence, "fired in 1 of 4 candidate windows")) << r.evidence;
    }
    // No quality evidence is owed: precision and sparsity are the same in both arms.
    EXPECT_NE(r.kind, "missing quality evidence") << r.evidence;
  }
  EXPECT_TRUE(near);
  for (const Risk& r : risks) {
    if (r.kind == "missing power data") {
      power = true;
      EXPECT_TRUE(absl::StrContains(r.evidence, "NVML: not found")) << r.evidence;
      EXPECT_EQ(r.rollback_boundary, "roll back to r1");
    }
  }
  EXPECT_TRUE(power);
}

}  // namespace
}  // namespace opmap::analysis::release_test
