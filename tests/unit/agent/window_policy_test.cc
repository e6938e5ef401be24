// WindowPolicy on a fake clock with fixed draws: when windows open, how jitter spreads
// them, and how the CPU budget shrinks and regrows them.
#include "agent/daemon/window_policy.h"

#include <gtest/gtest.h>

namespace opmap::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

// Seconds from kT0 (durations scaled by a fraction are within a nanosecond of exact).
double After(absl::Time t) { return absl::ToDoubleSeconds(t - kT0); }

WindowPolicyOptions Options() {
  WindowPolicyOptions o;
  o.every = absl::Seconds(60);
  o.window = absl::Seconds(2);
  o.jitter = 0.2;
  o.cpu_budget = 0.01;
  return o;
}

TEST(WindowPolicy, FirstWindowComesOneToTwoSecondsAfterRegistration) {
  WindowPolicy p(Options());
  EXPECT_EQ(p.FirstWindow(kT0, 0.0), kT0 + absl::Seconds(1));
  EXPECT_EQ(p.FirstWindow(kT0, 0.5), kT0 + absl::Milliseconds(1500));
  EXPECT_NEAR(After(p.FirstWindow(kT0, 0.999)), 1.999, 1e-9);
  // A draw out of range is clamped, never a window in the past or far away.
  EXPECT_EQ(p.FirstWindow(kT0, -3), kT0 + absl::Seconds(1));
  EXPECT_EQ(p.FirstWindow(kT0, 7), kT0 + absl::Seconds(2));
}

TEST(WindowPolicy, NextWindowIsEveryPlusOrMinusJitter) {
  WindowPolicy p(Options());
  EXPECT_EQ(p.NextWindow(kT0, 0.0), kT0 + absl::Seconds(60));
  EXPECT_NEAR(After(p.NextWindow(kT0, 1.0)), 72, 1e-9);   // +20%
  EXPECT_NEAR(After(p.NextWindow(kT0, -1.0)), 48, 1e-9);  // -20%
  EXPECT_NEAR(After(p.NextWindow(kT0, -5.0)), 48, 1e-9);  // clamped
  EXPECT_NEAR(After(p.NextWindow(kT0, 0.5)), 66, 1e-9);
  WindowPolicyOptions none = Options();
  none.jitter = 0;
  EXPECT_EQ(WindowPolicy(none).NextWindow(kT0, 1.0), kT0 + absl::Seconds(60));
}

TEST(WindowPolicy, WindowsShrinkOverBudgetAndRegrowUnderHalfOfIt) {
  WindowPolicy p(Options());
  EXPECT_EQ(p.WindowLength(), absl::Seconds(2));
  absl::Time t = kT0;
  double cpu = 100;
  p.ObserveCpu(t, cpu);  // the baseline only
  EXPECT_EQ(p.window_scale(), 1.0);
  // 0.5 cores for a second: far over the 0.01-core budget; the first sample sets the load.
  t += absl::Seconds(1);
  cpu += 0.5;
  p.ObserveCpu(t, cpu);
  EXPECT_DOUBLE_EQ(p.cpu_load(), 0.5);
  EXPECT_DOUBLE_EQ(p.window_scale(), 0.9);
  EXPECT_NEAR(absl::ToDoubleSeconds(p.WindowLength()), 1.8, 1e-9);
  // Samples closer than a second apart change nothing.
  EXPECT_FALSE(p.WantsCpuSample(t + absl::Milliseconds(999)));
  p.ObserveCpu(t + absl::Milliseconds(500), cpu + 10);
  EXPECT_DOUBLE_EQ(p.window_scale(), 0.9);
  // Held over budget, the scale bottoms out at 5%, and a window at 100 ms.
  for (int i = 0; i < 100; ++i) {
    t += absl::Seconds(1);
    cpu += 0.5;
    ASSERT_TRUE(p.WantsCpuSample(t));
    p.ObserveCpu(t, cpu);
  }
  EXPECT_DOUBLE_EQ(p.window_scale(), WindowPolicy::kMinScale);
  EXPECT_EQ(p.WindowLength(), absl::Milliseconds(100));
  // Idle: the smoothed load decays (weight 1/60 per second) below half the budget, then
  // the scale grows back by 5% a second up to 1.
  int seconds_to_full = 0;
  while (p.window_scale() < 1.0 && seconds_to_full < 2000) {
    t += absl::Seconds(1);
    p.ObserveCpu(t, cpu);
    ++seconds_to_full;
  }
  EXPECT_EQ(p.window_scale(), 1.0);
  EXPECT_LT(p.cpu_load(), 0.005);
  // ln(0.5/0.005)·60 ≈ 276 s of decay, then ln(20)/ln(1.05) ≈ 62 s of growth.
  EXPECT_GT(seconds_to_full, 300);
  EXPECT_LT(seconds_to_full, 400);
}

TEST(WindowPolicy, LoadBetweenHalfAndFullBudgetHoldsTheScale) {
  WindowPolicy p(Options());
  absl::Time t = kT0;
  double cpu = 0;
  p.ObserveCpu(t, cpu);
  for (int i = 0; i < 10; ++i) {
    t += absl::Seconds(1);
    cpu += 0.0075;  // 0.75 % of a core: inside [budget/2, budget]
    p.ObserveCpu(t, cpu);
  }
  EXPECT_NEAR(p.cpu_load(), 0.0075, 1e-9);
  EXPECT_EQ(p.window_scale(), 1.0);
}

}  // namespace
}  // namespace opmap::agent
