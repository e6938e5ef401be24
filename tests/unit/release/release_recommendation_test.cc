// Recommend(): verdicts, matrix rows and triggers on hand-built arms (release_fixture.h).
#include "analysis/release/release_recommendation.h"

#include <string>

#include "analysis/workload/workload_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/release/release_fixture.h"

namespace opmap::analysis {
namespace {

using namespace release_test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(Release, IdenticalArmsShip) {
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1)));
  EXPECT_EQ(r.verdict, Verdict::kShip);
  EXPECT_EQ(VerdictName(r.verdict), "ship");
  ASSERT_EQ(r.matrix.size(), 9u);
  for (const ValidationRow& row : r.matrix) {
    if (row.metric == "quality") {
      EXPECT_EQ(row.status, RowStatus::kUnavailable);  // no profile; not required
      EXPECT_FALSE(row.required);
      EXPECT_EQ(row.reason, "no workload profile (quality.<REV>, quality_threshold)");
    } else {
      EXPECT_EQ(row.status, RowStatus::kPass) << row.metric << ": " << row.reason;
    }
  }
  const ValidationRow& p99 = FindRow(r, "p99 latency");
  EXPECT_TRUE(p99.required);
  EXPECT_DOUBLE_EQ(*p99.baseline, 19.9);
  EXPECT_DOUBLE_EQ(*p99.candidate, 19.9);
  EXPECT_DOUBLE_EQ(*p99.change, 0);
  ASSERT_TRUE(p99.test.has_value());
  EXPECT_EQ(p99.test->p_value, 1);
  EXPECT_DOUBLE_EQ(p99.test->effect, 0.5);
  for (const Trigger& t : r.triggers) {
    EXPECT_FALSE(t.fired) << t.name;
    EXPECT_EQ(t.evaluable, t.name != "quality") << t.name << ": " << t.evidence;
  }
  ASSERT_GE(r.reasons.size(), 2u);
  EXPECT_EQ(r.reasons[0],
            "no evaluable trigger fired in any window (p99 regression, MFU drop, "
            "memory-stall rise, perf/W drop, errors)");
  EXPECT_THAT(r.reasons[1], HasSubstr("baseline 200 latency samples, candidate 200"));
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0], "rollback: no rollback trigger fired");
  EXPECT_THAT(r.rejected[1], StartsWith("hold: "));
  EXPECT_EQ(r.inputs.at("baseline.seed"), "7");
  EXPECT_EQ(r.inputs.at("candidate.runtime"), "vllm 0.6.3");
  EXPECT_EQ(r.inputs.at("candidate.revision"), "cand");
}

ReleaseInputs RegressedWithLayers() {
  Arm base = MakeArm("base", 1);
  Arm cand = MakeArm("cand", 1.2);  // p99 19.9 → 23.88 ms in every window
  base.layers = {{"decoder.attn", "aten::bmm", 5 * kMs, 9 * kMs, 3 * kMs},
                 {"decoder.mlp", "aten::mm", 8 * kMs, 12 * kMs, 6 * kMs},
                 {"lm_head", "aten::linear", 1 * kMs, std::nullopt, 1 * kMs}};
  cand.layers = {{"decoder.attn", "aten::bmm", 5.5 * kMs, 9.5 * kMs, 3.2 * kMs},
                 {"decoder.mlp", "aten::mm", 10.5 * kMs, 15 * kMs, 8.2 * kMs},
                 {"lm_head", "aten::linear", 0.9 * kMs, std::nullopt, 0.9 * kMs},
                 {"decoder.norm", "aten::layer_norm", 0.3 * kMs, std::nullopt, 0.3 * kMs}};
  return Inputs(base, cand);
}

TEST(Release, P99RegressionInEveryWindowRollsBackAndNamesTheLayer) {
  const Recommendation r = Recommend(RegressedWithLayers());
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "p99 regression");
  EXPECT_TRUE(t.evaluable);
  EXPECT_TRUE(t.fired);
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.windows_held, 4);
  EXPECT_EQ(t.layer, "decoder.mlp");  // +2.5 ms per request, the largest increase
  EXPECT_EQ(t.owner, "runtime systems engineer");
  EXPECT_THAT(t.evidence, HasSubstr("p99 23.88 ms vs baseline 19.90 ms (+20.0%, threshold 5.0%)"));
  EXPECT_THAT(t.evidence, HasSubstr("Mann–Whitney U p = 7.63e-16"));  // scipy: 7.6296e-16
  EXPECT_THAT(t.evidence, HasSubstr("n = 200/200"));
  EXPECT_THAT(t.evidence, HasSubstr("fired in 4 of 4 candidate windows"));
  EXPECT_THAT(t.evidence,
              HasSubstr("layer decoder.mlp: 8.00 ms → 10.50 ms per request (+2.50 ms), top "
                        "operator aten::mm (8.20 ms per request)"));
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_THAT(r.reasons[0],
              StartsWith("p99 regression trigger held for 4 consecutive candidate windows (≥ 3)"));
  EXPECT_THAT(r.reasons[0], HasSubstr("(owner: runtime systems engineer)"));
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0], "ship: rollback trigger(s) held: p99 regression");
  EXPECT_THAT(r.rejected[1], StartsWith("hold: "));
  EXPECT_EQ(FindRow(r, "p99 latency").status, RowStatus::kFail);
  EXPECT_NEAR(*FindRow(r, "p99 latency").change, 0.2, 1e-12);

  // Deltas, largest increase first; lm_head shrank; decoder.norm is new (0 in baseline).
  ASSERT_EQ(r.layer_deltas.size(), 4u);
  EXPECT_EQ(r.layer_deltas[0].layer, "decoder.mlp");
  EXPECT_NEAR(r.layer_deltas[0].ns_per_request, 2.5 * kMs, 1e-3);
  EXPECT_NEAR(*r.layer_deltas[0].p99_ns, 3 * kMs, 1e-3);
  EXPECT_EQ(r.layer_deltas[0].top_operator, "aten::mm");
  EXPECT_EQ(r.layer_deltas[1].layer, "decoder.attn");
  EXPECT_NEAR(r.layer_deltas[1].ns_per_request, 0.5 * kMs, 1e-3);
  EXPECT_EQ(r.layer_deltas[2].layer, "decoder.norm");
  EXPECT_NEAR(r.layer_deltas[2].ns_per_request, 0.3 * kMs, 1e-3);
  EXPECT_EQ(r.layer_deltas[3].layer, "lm_head");
  EXPECT_NEAR(r.layer_deltas[3].ns_per_request, -0.1 * kMs, 1e-3);
}

// Candidate ×1.2 over the arm (significant), but window p99s regress only where `bad`.
Recommendation WindowPattern(std::vector<bool> bad) {
  Arm cand = MakeArm("cand", 1.2, 200, static_cast<int>(bad.size()));
  for (size_t i = 0; i < bad.size(); ++i) {
    if (!bad[i]) cand.windows[i].p99_ns = 19.9 * kMs;
  }
  return Recommend(Inputs(MakeArm("base", 1), cand));
}

TEST(Release, RegressionInTwoConsecutiveWindowsHolds) {
  const Recommendation r = WindowPattern({false, true, true, false});
  EXPECT_EQ(r.verdict, Verdict::kHold);
  const Trigger& t = FindTrigger(r, "p99 regression");
  EXPECT_TRUE(t.fired);
  EXPECT_FALSE(t.held);
  EXPECT_EQ(t.windows_held, 2);
  EXPECT_THAT(t.evidence, HasSubstr("fired in 2 of 4 candidate windows (longest run 2, holds at 3)"));
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_THAT(r.reasons[0],
              StartsWith("p99 regression trigger fired but held for only 2 consecutive "
                         "candidate window(s) (< 3)"));
  EXPECT_EQ(r.rejected[0],
            "rollback: no trigger held for 3 consecutive windows (longest: p99 regression, 2)");
  EXPECT_THAT(r.rejected[1], StartsWith("ship: p99 regression trigger fired"));
}

TEST(Release, OnlyConsecutiveWindowsCount) {
  // Three bad windows, but never three in a row: hold.
  const Recommendation split = WindowPattern({true, true, false, true});
  EXPECT_EQ(split.verdict, Verdict::kHold);
  EXPECT_EQ(FindTrigger(split, "p99 regression").windows_held, 2);
  // Three in a row: rollback.
  const Recommendation run = WindowPattern({false, true, true, true});
  EXPECT_EQ(run.verdict, Verdict::kRollback);
  EXPECT_EQ(FindTrigger(run, "p99 regression").windows_held, 3);
}

TEST(Release, RegressionThresholdIsTwoAlphaWhenWider) {
  // +5.5% p99, Mann–Whitney p = 0.008 (scipy; significant). With the sketch's α = 0.54% the
  // threshold is 5% and the trigger holds; with α = 3% it is 2α = 6% and it stays quiet.
  ReleaseInputs in = Inputs(MakeArm("base", 1), MakeArm("cand", 1.055));
  EXPECT_EQ(Recommend(in).verdict, Verdict::kRollback);
  in.candidate.relative_accuracy = 0.03;
  const Recommendation r = Recommend(in);
  EXPECT_EQ(r.verdict, Verdict::kShip);
  const Trigger& t = FindTrigger(r, "p99 regression");
  EXPECT_FALSE(t.fired);
  EXPECT_THAT(t.rule, HasSubstr("max(5%, 2α) = 6.0%"));
  EXPECT_EQ(FindRow(r, "p99 latency").status, RowStatus::kPass);
}

TEST(Release, InsignificantRegressionDoesNotFire) {
  // Window and arm p99 +20%, but the latency samples are identical: p = 1.
  Arm cand = MakeArm("cand", 1);
  Arm base = MakeArm("base", 1);
  cand.p99_ns = 19.9 * 1.2 * kMs;
  for (ArmWindow& w : cand.windows) w.p99_ns = cand.p99_ns;
  const Recommendation r = Recommend(Inputs(base, cand));
  EXPECT_FALSE(FindTrigger(r, "p99 regression").fired);
  EXPECT_EQ(r.verdict, Verdict::kShip);
  EXPECT_EQ(FindRow(r, "p99 latency").reason, "+20.0% but not significant (Mann–Whitney U p = 1)");
}

TEST(Release, TooFewSamplesHold) {
  // 30 samples per arm, even with a +20% regression in every window: not a rollback.
  for (double scale : {1.0, 1.2}) {
    const Recommendation r =
        Recommend(Inputs(MakeArm("base", 1, 30), MakeArm("cand", scale, 30)));
    EXPECT_EQ(r.verdict, Verdict::kHold) << scale;
    for (const char* m : {"p50 latency", "p95 latency", "p99 latency", "throughput", "error rate"}) {
      EXPECT_EQ(FindRow(r, m).status, RowStatus::kInsufficient) << m;
    }
    EXPECT_EQ(FindRow(r, "p99 latency").reason,
              "baseline 30 latency samples, candidate 30; need ≥ 50 per arm");
    EXPECT_EQ(FindRow(r, "throughput").reason, "baseline 30 requests, candidate 30; need ≥ 50 per arm");
    const Trigger& t = FindTrigger(r, "p99 regression");
    EXPECT_FALSE(t.evaluable);
    EXPECT_FALSE(t.fired);
    EXPECT_THAT(r.reasons, ::testing::Contains(
                               "p99 latency is insufficient and required: baseline 30 latency "
                               "samples, candidate 30; need ≥ 50 per arm"));
  }
  ReleaseInputs in = Inputs(MakeArm("base", 1, 30), MakeArm("cand", 1, 30));
  in.min_samples = 20;
  EXPECT_EQ(Recommend(in).verdict, Verdict::kShip);
}

WorkloadProfile Profile(const std::string& extra) {
  absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(
      "model = m\nrevision = cand\nparameters = 7B\nlayers = 32\nheads = 32\nhead_dim = 128\n"
      "hidden = 4096\nprecision = bf16\nquality_metric = accuracy\n" + extra);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : WorkloadProfile{};
}

TEST(Release, PrecisionChangeWithoutQualityIsNeverShip) {
  const WorkloadProfile p = Profile("precision.cand = fp8\nquality_threshold = 0.7\nquality.base = 0.75\n");
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &p));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  const ValidationRow& q = FindRow(r, "quality");
  EXPECT_TRUE(q.required);
  EXPECT_EQ(q.status, RowStatus::kUnavailable);
  EXPECT_EQ(q.reason, "no quality.cand in the workload profile (required: precision bf16 → fp8)");
  EXPECT_EQ(*q.baseline, 0.75);
  EXPECT_FALSE(q.candidate.has_value());
  EXPECT_THAT(r.reasons, ElementsAre("quality is unavailable and required: no quality.cand in "
                                     "the workload profile (required: precision bf16 → fp8)"));
  EXPECT_EQ(r.rejected[0], "rollback: no rollback trigger fired");
  EXPECT_EQ(r.inputs.at("profile.model"), "m");
  EXPECT_EQ(r.inputs.at("profile.revision"), "cand");

  // Sparsity alone, and a precision change with quality but no threshold, hold too.
  const WorkloadProfile s = Profile("sparsity.cand = 2:4\nquality_threshold = 0.7\n");
  const Recommendation rs = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &s));
  EXPECT_EQ(rs.verdict, Verdict::kHold);
  EXPECT_THAT(FindRow(rs, "quality").reason, HasSubstr("(required: sparsity dense → 2:4)"));
  const WorkloadProfile t = Profile("precision.cand = fp8\nquality.cand = 0.9\n");
  const Recommendation rt = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &t));
  EXPECT_EQ(rt.verdict, Verdict::kHold);
  EXPECT_EQ(FindRow(rt, "quality").reason,
            "the workload profile has no quality_threshold (required: precision bf16 → fp8)");
}

TEST(Release, PrecisionChangeWithQualityAboveThresholdShips) {
  const WorkloadProfile p = Profile(
      "precision.cand = fp8\nquality_threshold = 0.7\nquality.base = 0.75\nquality.cand = 0.74\n");
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &p));
  EXPECT_EQ(r.verdict, Verdict::kShip);
  const ValidationRow& q = FindRow(r, "quality");
  EXPECT_EQ(q.status, RowStatus::kPass);
  EXPECT_EQ(q.unit, "accuracy");
  EXPECT_EQ(q.criterion, "≥ threshold 0.7");
  EXPECT_NEAR(*q.change, -0.01, 1e-12);
  EXPECT_EQ(q.reason, "checked for precision bf16 → fp8");
  EXPECT_TRUE(FindTrigger(r, "quality").evaluable);
  EXPECT_FALSE(FindTrigger(r, "quality").fired);
}

TEST(Release, QualityBelowThresholdRollsBack) {
  const WorkloadProfile p = Profile(
      "precision.cand = fp8\nquality_threshold = 0.7\nquality.base = 0.75\nquality.cand = 0.65\n");
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &p));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "quality");
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.owner, "performance modeling owner");
  EXPECT_EQ(t.evidence, "accuracy of cand = 0.65, threshold ≥ 0.7 (precision bf16 → fp8)");
  EXPECT_EQ(FindRow(r, "quality").status, RowStatus::kFail);
  EXPECT_EQ(FindRow(r, "quality").reason, "candidate 0.65 < threshold 0.7");
  EXPECT_THAT(r.reasons[0], StartsWith("quality trigger holds: accuracy of cand = 0.65"));
  // Lower is better: 0.35 > 0.3 is beyond the threshold even without a precision change.
  const WorkloadProfile l = Profile(
      "quality_higher_is_better = false\nquality_threshold = 0.3\nquality.cand = 0.35\n");
  const Recommendation rl = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &l));
  EXPECT_EQ(rl.verdict, Verdict::kRollback);
  EXPECT_EQ(FindRow(rl, "quality").criterion, "≤ threshold 0.3");
}

void SetMfu(Arm& a, double mfu) {
  a.mfu = mfu;
  for (ArmWindow& w : a.windows) w.mfu = mfu;
}

TEST(Release, MfuDropTrigger) {
  Arm cand = MakeArm("cand", 1);
  SetMfu(cand, 0.36);  // −10% relative in every window
  Recommendation r = Recommend(Inputs(MakeArm("base", 1), cand));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "MFU drop");
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.windows_held, 4);
  EXPECT_EQ(t.owner, "ML compiler engineer");
  EXPECT_THAT(t.evidence, StartsWith("MFU 36.0% vs baseline 40.0% (-10.0%, basis: mfu)"));
  const ValidationRow& row = FindRow(r, "MFU");
  EXPECT_EQ(row.status, RowStatus::kFail);
  EXPECT_DOUBLE_EQ(*row.baseline, 40);
  EXPECT_DOUBLE_EQ(*row.candidate, 36);
  EXPECT_NEAR(*row.change, -0.1, 1e-12);

  SetMfu(cand, 0.39);  // −2.5%: quiet
  EXPECT_EQ(Recommend(Inputs(MakeArm("base", 1), cand)).verdict, Verdict::kShip);

  // No MFU in an arm: achieved FLOP/s, and the evidence says so.
  Arm b = MakeArm("base", 1), c = MakeArm("cand", 1);
  for (Arm* a : {&b, &c}) {
    a->mfu.reset();
    for (ArmWindow& w : a->windows) w.mfu.reset();
  }
  b.mfu = 0.4;  // only one arm has MFU: fall back to achieved FLOP/s
  b.achieved_flops_per_s = 100e12;
  c.achieved_flops_per_s = 90e12;
  for (ArmWindow& w : c.windows) w.achieved_flops_per_s = 90e12;
  r = Recommend(Inputs(b, c));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  EXPECT_THAT(FindTrigger(r, "MFU drop").evidence,
              HasSubstr("achieved 90.0 vs baseline 100.0 TFLOP/s (-10.0%, basis: "
                        "achieved_flops_per_s"));
  EXPECT_EQ(FindRow(r, "MFU").unit, "TFLOP/s");
  EXPECT_DOUBLE_EQ(*FindRow(r, "MFU").candidate, 90);
}

TEST(Release, MfuDropCountsOnlyWindowsAtEqualLoad) {
  Arm cand = MakeArm("cand", 1);
  SetMfu(cand, 0.36);
  // Windows 2 and 3 ran 60 requests in 60 s against the baseline's 50: +20% load.
  cand.windows[2].requests = cand.windows[3].requests = 60;
  cand.requests = 220;
  cand.throughput_rps = 220 / 240.0;  // +10% over the arm: the MFU row can't compare
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1), cand));
  const Trigger& t = FindTrigger(r, "MFU drop");
  EXPECT_TRUE(t.fired);
  EXPECT_EQ(t.windows_held, 2);
  EXPECT_FALSE(t.held);
  EXPECT_THAT(t.evidence, HasSubstr("2 candidate window(s) at a different load not counted"));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  EXPECT_EQ(FindRow(r, "MFU").status, RowStatus::kUnavailable);
  EXPECT_THAT(FindRow(r, "MFU").reason, StartsWith("arms ran at different loads (0.83 vs 0.92 req/s"));
}

// The candidate draws 10% more GPU power for the same requests: requests per joule drop
// 9.1% in every window at equal load.
TEST(Release, PerfPerWattDropTrigger) {
  Arm cand = MakeArm("cand", 1);
  cand.gpu_watts = 440;
  cand.requests_per_joule = *cand.throughput_rps / 440;
  for (ArmWindow& w : cand.windows) {
    w.gpu_watts = 440;
    w.requests_per_joule = static_cast<double>(w.requests) / (440 * 60.0);
  }
  Recommendation r = Recommend(Inputs(MakeArm("base", 1), cand));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "perf/W drop");
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.windows_held, 4);
  EXPECT_EQ(t.owner, "runtime systems engineer");
  EXPECT_THAT(t.evidence, StartsWith("0.00189 req/J, 440.0 W vs baseline 0.00208 req/J, 400.0 W "
                                     "(-9.1%)"));
  const ValidationRow& row = FindRow(r, "perf per watt");
  EXPECT_EQ(row.status, RowStatus::kFail);
  EXPECT_EQ(row.unit, "req/J");
  EXPECT_NEAR(*row.change, 400.0 / 440 - 1, 1e-12);

  // Two windows only (the others at 402 W): fired, not held → hold, never rollback.
  for (int i : {0, 1}) {
    cand.windows[i].requests_per_joule = static_cast<double>(cand.windows[i].requests) / (402 * 60.0);
  }
  cand.requests_per_joule = *cand.throughput_rps / 421;
  r = Recommend(Inputs(MakeArm("base", 1), cand));
  EXPECT_EQ(FindTrigger(r, "perf/W drop").windows_held, 2);
  EXPECT_FALSE(FindTrigger(r, "perf/W drop").held);
  EXPECT_EQ(r.verdict, Verdict::kHold);

  // No power in an arm: unavailable with the arm's reason, and the verdict is not held by it.
  Arm base = MakeArm("base", 1), quiet = MakeArm("cand", 1);
  quiet.requests_per_joule.reset();
  for (ArmWindow& w : quiet.windows) w.requests_per_joule.reset();
  quiet.unavailable["perf_per_watt"] = "no window of the arm has GPU power (power gpu: NVML: x)";
  r = Recommend(Inputs(base, quiet));
  EXPECT_EQ(r.verdict, Verdict::kShip);
  EXPECT_FALSE(FindTrigger(r, "perf/W drop").evaluable);
  EXPECT_EQ(FindRow(r, "perf per watt").status, RowStatus::kUnavailable);
  EXPECT_THAT(FindRow(r, "perf per watt").reason,
              HasSubstr("candidate: no window of the arm has GPU power (power gpu: NVML: x)"));
}

TEST(Release, MemoryStallRiseTrigger) {
  Arm cand = MakeArm("cand", 1);
  cand.memory_stall_share = 0.36;  // +6 points
  for (ArmWindow& w : cand.windows) w.memory_stall_share = 0.36;
  Recommendation r = Recommend(Inputs(MakeArm("base", 1), cand));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "memory-stall rise");
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.owner, "ML compiler engineer");
  EXPECT_THAT(t.evidence, StartsWith("memory-stall share 36.0% vs baseline 30.0% (+6.0 points)"));
  EXPECT_NEAR(*FindRow(r, "memory-stall share").change, 6, 1e-9);
  EXPECT_EQ(FindRow(r, "memory-stall share").status, RowStatus::kFail);

  cand.memory_stall_share = 0.34;  // +4 points: quiet
  for (ArmWindow& w : cand.windows) w.memory_stall_share = 0.34;
  r = Recommend(Inputs(MakeArm("base", 1), cand));
  EXPECT_EQ(r.verdict, Verdict::kShip);
  EXPECT_FALSE(FindTrigger(r, "memory-stall rise").fired);
}

TEST(Release, ErrorsUpTrigger) {
  Arm base = MakeArm("base", 1), cand = MakeArm("cand", 1);
  base.errors = 2;  // 1%
  base.windows[0].errors = base.windows[2].errors = 1;
  cand.errors = 8;  // 4%, 2 of 50 in every window
  for (ArmWindow& w : cand.windows) w.errors = 2;
  const Recommendation r = Recommend(Inputs(base, cand));
  EXPECT_EQ(r.verdict, Verdict::kRollback);
  const Trigger& t = FindTrigger(r, "errors");
  EXPECT_TRUE(t.held);
  EXPECT_EQ(t.owner, "runtime systems engineer");
  EXPECT_THAT(t.evidence, StartsWith("error rate 4.000% (8/200) vs baseline 1.000% (2/200)"));
  const ValidationRow& row = FindRow(r, "error rate");
  EXPECT_EQ(row.status, RowStatus::kFail);
  EXPECT_DOUBLE_EQ(*row.baseline, 1);
  EXPECT_DOUBLE_EQ(*row.candidate, 4);
}

TEST(Release, MissingFiguresAreUnavailableWithReasons) {
  Arm base = MakeArm("base", 1), cand = MakeArm("cand", 1);
  for (Arm* a : {&base, &cand}) {
    a->mfu.reset();
    a->memory_stall_share.reset();
    for (ArmWindow& w : a->windows) {
      w.mfu.reset();
      w.memory_stall_share.reset();
    }
    a->unavailable["memory_stall_share"] = "no PMU in this VM";
  }
  base.unavailable["mfu"] = "no hardware envelope for 'NVIDIA L4'";
  cand.errors.reset();
  cand.unavailable["errors"] = "the load generator reports no failures";
  Recommendation r = Recommend(Inputs(base, cand));
  const ValidationRow& mfu = FindRow(r, "MFU");
  EXPECT_EQ(mfu.status, RowStatus::kUnavailable);
  EXPECT_FALSE(mfu.baseline.has_value());  // never 0
  EXPECT_FALSE(mfu.candidate.has_value());
  EXPECT_EQ(mfu.reason,
            "baseline: no hardware envelope for 'NVIDIA L4'; candidate: no MFU figure (no "
            "reason given)");
  EXPECT_EQ(FindRow(r, "memory-stall share").reason,
            "baseline: no PMU in this VM; candidate: no PMU in this VM");
  EXPECT_EQ(FindRow(r, "error rate").reason,
            "candidate: the load generator reports no failures");
  EXPECT_FALSE(FindTrigger(r, "MFU drop").evaluable);
  EXPECT_EQ(FindTrigger(r, "MFU drop").evidence, mfu.reason);
  EXPECT_FALSE(FindTrigger(r, "errors").evaluable);
  // None of these is required: the verdict is ship, and says what was not evaluated.
  EXPECT_EQ(r.verdict, Verdict::kShip);
  EXPECT_THAT(r.reasons, ::testing::Contains(
                             "not evaluated: memory-stall rise (baseline: no PMU in this VM; "
                             "candidate: no PMU in this VM)"));

  // p99 is required: missing in the candidate, the release holds.
  cand.p99_ns.reset();
  cand.unavailable["p99"] = "latency sketch empty";
  r = Recommend(Inputs(base, cand));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  EXPECT_EQ(FindRow(r, "p99 latency").status, RowStatus::kUnavailable);
  EXPECT_EQ(FindRow(r, "p99 latency").reason, "candidate: latency sketch empty");
  EXPECT_FALSE(FindTrigger(r, "p99 regression").evaluable);
}

TEST(Release, SlaAndTargetRowsFailAndHold) {
  const WorkloadProfile p = Profile("sla_p99_ms = 18\nsla_p50_ms = 20\n");
  Recommendation r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &p));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  EXPECT_EQ(FindRow(r, "p99 latency").status, RowStatus::kFail);
  EXPECT_EQ(FindRow(r, "p99 latency").reason, "candidate p99 19.90 ms > SLA 18 ms");
  EXPECT_EQ(FindRow(r, "p50 latency").status, RowStatus::kPass);  // 15 ms ≤ 20 ms
  EXPECT_TRUE(FindRow(r, "p50 latency").required);
  EXPECT_FALSE(FindRow(r, "p95 latency").required);

  const WorkloadProfile t = Profile("throughput_target = 1\n");  // arms run 0.83 req/s
  r = Recommend(Inputs(MakeArm("base", 1), MakeArm("cand", 1), &t));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  EXPECT_EQ(FindRow(r, "throughput").reason, "candidate 0.83 req/s < target 1");
}

TEST(Release, NoWindowsCanHoldButNeverRollBack) {
  // The arm-level regression fires, but without windows it cannot hold.
  const Recommendation r = Recommend(Inputs(MakeArm("base", 1, 200, 0), MakeArm("cand", 1.2, 200, 0)));
  EXPECT_EQ(r.verdict, Verdict::kHold);
  EXPECT_TRUE(FindTrigger(r, "p99 regression").fired);
  EXPECT_EQ(FindTrigger(r, "p99 regression").windows_held, 0);
}

TEST(Release, Names) {
  EXPECT_EQ(RowStatusName(RowStatus::kPass), "pass");
  EXPECT_EQ(RowStatusName(RowStatus::kFail), "fail");
  EXPECT_EQ(RowStatusName(RowStatus::kUnavailable), "unavailable");
  EXPECT_EQ(RowStatusName(RowStatus::kInsufficient), "insufficient");
  EXPECT_EQ(VerdictName(Verdict::kHold), "hold");
  EXPECT_EQ(VerdictName(Verdict::kRollback), "rollback");
}

}  // namespace
}  // namespace opmap::analysis

namespace opmap::analysis::release_test {
namespace {

// Throughput counted in capture windows is a Poisson sample: a drop over 5% fails only
// when it is also significant. Baseline 200 requests over 240 s (0.8333 req/s).
//   -10% on 180 requests: z = (0.75 − 0.8333)/sqrt(0.8333/240 + 0.75/240) = −1.025,
//   p = 0.305 → within chance, the row passes and says so.
//   -50% on 20,000 vs 40,000 requests over 240 s each: z = −81.6, p ≈ 0 → fails.
TEST(ReleaseThroughput, DropMustBeSignificant) {
  Arm base = MakeArm("r1", 1.0);
  Arm cand = MakeArm("r2", 1.0);
  cand.throughput_rps = 180 / 240.0;
  Recommendation r = Recommend(Inputs(base, cand));
  const ValidationRow& row = FindRow(r, "throughput");
  EXPECT_EQ(row.status, RowStatus::kPass) << row.reason;
  EXPECT_THAT(row.reason, ::testing::HasSubstr("within chance (Poisson rate test p = 0.305)"));

  Arm big_base = MakeArm("r1", 1.0), big_cand = MakeArm("r2", 1.0);
  big_base.throughput_rps = 40000 / 240.0;
  big_cand.throughput_rps = 20000 / 240.0;
  r = Recommend(Inputs(big_base, big_cand));
  const ValidationRow& fail = FindRow(r, "throughput");
  EXPECT_EQ(fail.status, RowStatus::kFail);
  EXPECT_THAT(fail.reason, ::testing::HasSubstr("-50.0% vs baseline (Poisson rate test p = 0)"));
}

}  // namespace
}  // namespace opmap::analysis::release_test
