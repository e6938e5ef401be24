// Classify(): one test per docs/metrics.md rule, with the evidence values computed by hand on
// the H100 SXM5 envelope (132 SMs, 3.35e12 B/s, bf16 989.4e12 FLOP/s, ridge 295.34 FLOP/B).
// A 100 µs operator: U_c = F / (1e-4 s · 989.4e12) = F / 9.894e10,
//                    U_m = B / (1e-4 s · 3.35e12)  = B / 3.35e8.
#include "analysis/bottleneck/bottleneck_class.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

HardwareEnvelope H100() {
  auto env = EnvelopeForGpuName("NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(env.has_value());
  return *env;
}

// Passes rules 1–3 with every figure present: one 100 µs kernel, cheap launch, no idle.
OperatorFigures Base() {
  OperatorFigures f;
  f.name = "aten::mm";
  f.layer_type = LayerType::kMatmul;
  f.instances = 1;
  f.gpu_time_ns = 100'000;
  f.kernel_count = 1;
  f.small_kernel_count = 0;
  f.launch_call_ns = 5'000;
  f.host_wait_idle_ns = 0;
  f.idle_ns = 0;
  f.non_overlapped_comm_ns = 0;
  f.iteration_ns = 1'000'000;
  return f;
}

const Evidence& Row(const Classification& c, const std::string& figure) {
  for (const Evidence& e : c.evidence) {
    if (e.figure == figure) return e;
  }
  static const Evidence kNone;
  ADD_FAILURE() << "no evidence row " << figure;
  return kNone;
}

TEST(Classify, CommunicationByCollective) {
  OperatorFigures f = Base();
  f.collective = true;
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kCommunication);
  ASSERT_EQ(c.evidence.size(), 2u);  // first match wins: rule 1's rows only
  EXPECT_TRUE(c.evidence[0].met);
  EXPECT_EQ(c.evidence[0].value, 1.0);
  EXPECT_DOUBLE_EQ(*c.evidence[1].value, 0.0);
  EXPECT_FALSE(c.evidence[1].met);
  EXPECT_EQ(c.summary, "communication: its kernels are collectives");
}

TEST(Classify, CommunicationByNonOverlappedShare) {
  OperatorFigures f = Base();
  f.non_overlapped_comm_ns = 50'000;  // 50 µs of a 1 ms iteration = 0.05 ≥ 0.04
  Classification c = Classify(f, nullptr);
  EXPECT_EQ(c.cls, BottleneckClass::kCommunication);
  EXPECT_DOUBLE_EQ(*c.evidence[1].value, 0.05);
  EXPECT_TRUE(c.evidence[1].met);
  EXPECT_TRUE(absl::StrContains(c.summary, "5.0% of the iteration")) << c.summary;

  f.non_overlapped_comm_ns = 30'000;  // 0.03: rule not met, later rules decide
  c = Classify(f, nullptr);
  EXPECT_NE(c.cls, BottleneckClass::kCommunication);
  EXPECT_DOUBLE_EQ(*c.evidence[1].value, 0.03);
  EXPECT_FALSE(c.evidence[1].met);
}

TEST(Classify, HostStarvedAtHalfOfGpuTimePlusIdle) {
  OperatorFigures f = Base();
  f.idle_ns = 120'000;
  f.host_wait_idle_ns = 110'000;  // 110 / (100 + 120) = 0.5 exactly: met (≥)
  Classification c = Classify(f, nullptr);
  EXPECT_EQ(c.cls, BottleneckClass::kHostStarved);
  ASSERT_EQ(c.evidence.size(), 3u);
  EXPECT_EQ(c.evidence[2].figure, "host-wait idle share");
  EXPECT_DOUBLE_EQ(*c.evidence[2].value, 0.5);
  EXPECT_TRUE(c.evidence[2].met);
  EXPECT_TRUE(absl::StrContains(c.summary, "host-wait idle 110.0 µs = 50.0%")) << c.summary;

  f.host_wait_idle_ns = 109'000;  // 109 / 220 = 0.49545
  c = Classify(f, nullptr);
  EXPECT_NE(c.cls, BottleneckClass::kHostStarved);
  EXPECT_NEAR(*c.evidence[2].value, 0.495454, 1e-6);
  EXPECT_FALSE(c.evidence[2].met);
}

TEST(Classify, LaunchOverheadNeedsTheGpuToHaveWaited) {
  OperatorFigures f = Base();
  f.kernel_count = 4;
  f.small_kernel_count = 2;  // 2 of 4 = 0.5 ≥ 0.5
  // Back to back (no idle before them): short kernels alone are not launch-bound.
  Classification c = Classify(f, nullptr);
  EXPECT_NE(c.cls, BottleneckClass::kLaunchOverhead) << c.summary;
  EXPECT_TRUE(Row(c, "kernels < 10 µs").met);
  EXPECT_DOUBLE_EQ(*Row(c, "idle before its kernels ÷ GPU time").value, 0.0);
  EXPECT_FALSE(Row(c, "idle before its kernels ÷ GPU time").met);

  // 100 µs of idle before 100 µs of kernels: the GPU waited on the launches.
  f.idle_ns = 100'000;
  c = Classify(f, nullptr);
  EXPECT_EQ(c.cls, BottleneckClass::kLaunchOverhead);
  EXPECT_DOUBLE_EQ(*Row(c, "kernels < 10 µs").value, 0.5);
  EXPECT_DOUBLE_EQ(*Row(c, "idle before its kernels ÷ GPU time").value, 1.0);
  EXPECT_TRUE(Row(c, "idle before its kernels ÷ GPU time").met);
  EXPECT_DOUBLE_EQ(*Row(c, "GPU time ÷ launch call time").value, 20.0);  // 100 µs ÷ 5 µs
  EXPECT_FALSE(Row(c, "GPU time ÷ launch call time").met);
  EXPECT_EQ(c.summary,
            "launch-overhead: 2 of 4 kernels < 10 µs (50.0%) and idle before them 100.0 µs ≥ "
            "their GPU time 100.0 µs");

  f.small_kernel_count = 1;  // 0.25: not many, and GPU time ≫ launch: not launch-bound
  EXPECT_NE(Classify(f, nullptr).cls, BottleneckClass::kLaunchOverhead);
}

TEST(Classify, LaunchOverheadByLaunchTime) {
  OperatorFigures f = Base();
  f.gpu_time_ns = 12'000;  // one 12 µs kernel: not small
  f.launch_call_ns = 15'000;
  Classification c = Classify(f, nullptr);
  EXPECT_EQ(c.cls, BottleneckClass::kLaunchOverhead);
  EXPECT_DOUBLE_EQ(*Row(c, "kernels < 10 µs").value, 0.0);
  EXPECT_FALSE(Row(c, "kernels < 10 µs").met);
  EXPECT_DOUBLE_EQ(*Row(c, "GPU time ÷ launch call time").value, 0.8);
  EXPECT_TRUE(Row(c, "GPU time ÷ launch call time").met);
  EXPECT_EQ(c.summary, "launch-overhead: GPU time 12.0 µs < launch call time 15.0 µs");

  f.launch_call_ns.reset();  // not measured: the rule cannot fire on it
  c = Classify(f, nullptr);
  EXPECT_NE(c.cls, BottleneckClass::kLaunchOverhead);
  EXPECT_FALSE(Row(c, "GPU time ÷ launch call time").value.has_value());
  EXPECT_EQ(Row(c, "GPU time ÷ launch call time").missing, "no launch API record");
}

TEST(Classify, BusyShortGemmsAreNotLaunchOverhead) {
  // The case: an addmm at 56% of the bf16 peak made of short GEMMs (61% < 10 µs)
  // whose GPU time is 2.8× its launch-call time and whose host-wait share is 5%.
  OperatorFigures f = Base();
  f.kernel_count = 100;
  f.small_kernel_count = 61;
  f.launch_call_ns = 35'714;           // 100 µs ÷ 2.8
  f.idle_ns = 5'300;
  f.host_wait_idle_ns = 5'250;         // ≈ 5% of GPU time + idle
  f.flops = 0.56 * 9.894e10;           // U_c 0.56
  f.bytes = 0.1 * 3.35e8;              // U_m 0.1
  const HardwareEnvelope env = H100();
  const Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kLatencyOccupancy) << c.summary;
  EXPECT_NEAR(*c.u_compute, 0.56, 1e-12);
}

TEST(Classify, ComputeBound) {
  OperatorFigures f = Base();
  f.flops = 7.9152e10;  // U_c = 0.8
  f.bytes = 3.35e7;     // U_m = 0.1
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kComputeBound);
  EXPECT_NEAR(*c.u_compute, 0.8, 1e-12);
  EXPECT_NEAR(*c.u_memory, 0.1, 1e-12);
  EXPECT_NEAR(*c.intensity, 2362.746, 1e-3);  // 7.9152e10 / 3.35e7
  EXPECT_NEAR(*c.ridge, 295.343, 1e-3);       // 989.4e12 / 3.35e12
  ASSERT_EQ(c.evidence.size(), 4u);  // rules 1 (2 rows), 2 and 3: launch-overhead is later
  EXPECT_EQ(c.evidence[3].figure, "U_c");
  EXPECT_EQ(c.evidence[3].rule, "≥ 0.6 and ≥ U_m");
  EXPECT_TRUE(c.evidence[3].met);
  EXPECT_EQ(c.summary, "compute-bound: U_c 0.8 ≥ 0.6 and ≥ U_m 0.1");
}

TEST(Classify, MemoryBoundByUtilization) {
  OperatorFigures f = Base();
  f.flops = 9.894e9;  // U_c = 0.1
  f.bytes = 2.68e8;   // U_m = 0.8
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kMemoryBound);
  ASSERT_EQ(c.evidence.size(), 7u);  // rules 1–4
  EXPECT_NEAR(*Row(c, "U_c").value, 0.1, 1e-12);
  EXPECT_FALSE(Row(c, "U_c").met);
  EXPECT_NEAR(*Row(c, "U_m").value, 0.8, 1e-12);
  EXPECT_TRUE(Row(c, "U_m").met);
  EXPECT_NEAR(*Row(c, "arithmetic intensity").value, 36.918, 1e-3);  // 9.894e9 / 2.68e8
  EXPECT_TRUE(Row(c, "arithmetic intensity").met);
  EXPECT_EQ(Row(c, "memory-stall fraction").missing, "no warp-stall samples");
  EXPECT_EQ(c.summary, "memory-bound: U_m 0.8 ≥ 0.6 and > U_c 0.1");
}

TEST(Classify, MemoryBoundByStallBelowRidgeEvenWithLowUm) {
  OperatorFigures f = Base();
  f.flops = 9.894e9;   // U_c = 0.1
  f.bytes = 1.675e8;   // U_m = 0.5 < 0.6
  f.memory_stall_fraction = 0.55;
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kMemoryBound);
  EXPECT_NEAR(*Row(c, "U_m").value, 0.5, 1e-12);
  EXPECT_FALSE(Row(c, "U_m").met);
  EXPECT_NEAR(*Row(c, "arithmetic intensity").value, 59.069, 1e-3);  // < 295.34
  EXPECT_TRUE(Row(c, "arithmetic intensity").met);
  EXPECT_DOUBLE_EQ(*Row(c, "memory-stall fraction").value, 0.55);
  EXPECT_TRUE(Row(c, "memory-stall fraction").met);
  EXPECT_TRUE(absl::StrContains(c.summary, "intensity 59.1 FLOP/B < ridge 295 FLOP/B"))
      << c.summary;

  // Same stalls above the ridge (intensity 989.4): not memory-bound, latency instead.
  f.bytes = 1e7;  // U_m = 0.02985
  c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kLatencyOccupancy);
  EXPECT_FALSE(Row(c, "memory-stall fraction").met);
  EXPECT_FALSE(Row(c, "arithmetic intensity").met);
}

TEST(Classify, LatencyOccupancyWithSmallGrid) {
  OperatorFigures f = Base();
  f.flops = 9.894e9;  // U_c = 0.1
  f.bytes = 6.7e7;    // U_m = 0.2
  f.max_grid_blocks = 66;  // 66 / 132 SMs = 0.5 wave
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kLatencyOccupancy);
  // Rules 1–5 and 6's two rows: 2 + 1 + 1 + 3 + 3 + 2.
  ASSERT_EQ(c.evidence.size(), 12u);
  EXPECT_EQ(c.evidence[10].figure, "max(U_c, U_m)");
  EXPECT_NEAR(*c.evidence[10].value, 0.2, 1e-12);
  EXPECT_TRUE(c.evidence[10].met);
  EXPECT_EQ(c.evidence[11].figure, "grid blocks ÷ SMs");
  EXPECT_DOUBLE_EQ(*c.evidence[11].value, 0.5);
  EXPECT_TRUE(c.evidence[11].met);
  EXPECT_EQ(c.summary,
            "latency-occupancy: U_c 0.1 and U_m 0.2 both < 0.6; largest grid 66 blocks on "
            "132 SMs (less than one wave)");

  f.max_grid_blocks = 264;  // two waves: still latency-class, grid row not met
  c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kLatencyOccupancy);
  EXPECT_DOUBLE_EQ(*c.evidence[11].value, 2.0);
  EXPECT_FALSE(c.evidence[11].met);
}

TEST(Classify, UnclassifiedWhenFiguresAreMissing) {
  OperatorFigures f = Base();
  f.name = "aten::gelu";
  f.flops_missing = "no FLOPs formula for aten::gelu";
  const HardwareEnvelope env = H100();
  Classification c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kUnclassified);
  EXPECT_FALSE(c.u_compute.has_value());
  EXPECT_EQ(Row(c, "U_c").missing, "no FLOPs formula for aten::gelu");
  EXPECT_EQ(Row(c, "U_m").missing, "no DRAM byte count");
  EXPECT_FALSE(Row(c, "max(U_c, U_m)").value.has_value());
  EXPECT_TRUE(absl::StrContains(c.summary, "U_c (no FLOPs formula for aten::gelu)"))
      << c.summary;
  EXPECT_TRUE(absl::StrContains(c.summary, "U_m (no DRAM byte count)")) << c.summary;

  // FLOPs known but no envelope.
  f.flops = 1e9;
  c = Classify(f, nullptr);
  EXPECT_EQ(c.cls, BottleneckClass::kUnclassified);
  EXPECT_EQ(Row(c, "U_c").missing, "no hardware envelope");

  // U_c ≥ 0.6 but U_m unknown: "U_c is the larger" cannot be decided, so no class.
  f.flops = 7.9152e10;
  c = Classify(f, &env);
  EXPECT_EQ(c.cls, BottleneckClass::kUnclassified);
  EXPECT_NEAR(*Row(c, "U_c").value, 0.8, 1e-12);
  EXPECT_FALSE(Row(c, "U_c").met);
  EXPECT_EQ(Row(c, "U_c").missing, "U_m unknown: no DRAM byte count");
  EXPECT_FALSE(Row(c, "max(U_c, U_m)").met);  // 0.8 already fails "both < 0.6"

  // A precision the GPU has no peak for.
  auto a100 = EnvelopeForGpuName("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.has_value());
  f.precision = Precision::kFp8;
  c = Classify(f, &*a100);
  EXPECT_EQ(Row(c, "U_c").missing, "no fp8 peak on A100 SXM4 80GB");
}

TEST(Classify, NamesAndRooflineExpectedClasses) {
  EXPECT_EQ(BottleneckClassName(BottleneckClass::kLatencyOccupancy), "latency-occupancy");
  EXPECT_EQ(BottleneckClassName(BottleneckClass::kHostStarved), "host-starved");
  const HardwareEnvelope env = H100();
  // A batched score GEMM at 62.46 FLOP/B is below the bf16 tensor-core ridge 295.34:
  // memory-bound by the roofline, whatever its layer type says.
  OperatorFigures f = Base();
  f.flops = 55058892800.0;
  f.bytes = 881532960.0;
  std::string basis;
  EXPECT_EQ(ExpectedClass(f, &env, &basis), BottleneckClass::kMemoryBound);
  EXPECT_TRUE(absl::StrContains(basis, "62.5 FLOP/B < ridge 295 FLOP/B (tensor-core bf16)")) << basis;
  // At the ridge or above: compute-bound (ties go to compute, as TraceLens).
  f.bytes = *f.flops / (989.4e12 / 3.35e12);
  EXPECT_EQ(ExpectedClass(f, &env, nullptr), BottleneckClass::kComputeBound);
  // The vector path: a ridge of 133.8e12 / 3.35e12 = 39.9 FLOP/B; layer_norm at 1.23 is
  // memory-bound, and so is anything at 100 FLOP/B on the tensor-core ridge.
  f.vector_path = true;
  f.flops = 364032;
  f.bytes = 294912;
  EXPECT_EQ(ExpectedClass(f, &env, &basis), BottleneckClass::kMemoryBound);
  EXPECT_TRUE(absl::StrContains(basis, "vector bf16")) << basis;
  f.flops = 50.0 * *f.bytes;
  EXPECT_EQ(ExpectedClass(f, &env, nullptr), BottleneckClass::kComputeBound);
  // A missing figure gives no expected class, and says which.
  f.bytes.reset();
  f.bytes_missing = "no byte count";
  EXPECT_EQ(ExpectedClass(f, &env, &basis), BottleneckClass::kUnclassified);
  EXPECT_EQ(basis, "no byte count");
}

}  // namespace
}  // namespace opmap::analysis
