// Memory-stall fractions (docs/metrics.md) from stall samples: reason-name normalization, the
// per-kernel and per-layer-type sums, the analyze JSON fields, and the wire round trip.
#include "analysis/stalls/stall_summary.h"

#include <cmath>
#include <string>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/trace_summary.h"
#include "analysis/wire/batch_codec.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(StallReasons, NormalizesCuptiAndNsightComputeSpellings) {
  EXPECT_EQ(NormalizeStallReason("smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
            "long_scoreboard");
  EXPECT_EQ(NormalizeStallReason("smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"),
            "long_scoreboard");
  EXPECT_EQ(NormalizeStallReason(
                "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"),
            "mio_throttle");
  EXPECT_EQ(NormalizeStallReason("  Selected "), "selected");
  EXPECT_EQ(ClassifyStallReason("selected"), StallClass::kSelected);
  for (const char* r : {"long_scoreboard", "lg_throttle", "tex_throttle", "drain", "membar",
                        "imc_miss"}) {
    EXPECT_EQ(ClassifyStallReason(r), StallClass::kMemory) << r;
  }
  EXPECT_EQ(ClassifyStallReason("short_scoreboard"), StallClass::kOnChip);
  EXPECT_EQ(ClassifyStallReason("mio_throttle"), StallClass::kOnChip);
  EXPECT_EQ(ClassifyStallReason("math_pipe_throttle"), StallClass::kOther);
  EXPECT_EQ(ClassifyStallReason("wait"), StallClass::kOther);
}

// A GEMM kernel (matmul) and a triad (elementwise), each with PC samples:
//   gemm : selected 400, long_scoreboard 50, short_scoreboard 100, math_pipe_throttle 350
//          → memory 50/500 = 0.1, on-chip 100/500 = 0.2
//   triad: selected 100, long_scoreboard 700 (two rows: plain and _not_issued), lg_throttle
//          100, wait 100 → memory 800/900, on-chip 0
Trace TwoKernelTrace() {
  Trace t;
  t.info.format = "opmap-capture";
  auto kernel = [&](const char* name, int64_t start) {
    GpuEvent& g = t.gpu_events.emplace_back();
    g.name = t.strings.Intern(name);
    g.start_ns = start;
    g.dur_ns = 1000;
    g.grid = {128, 1, 1};
    g.block = {256, 1, 1};
  };
  kernel("gemm_tiled_fp32_kernel", 0);
  kernel("triad_elementwise_kernel", 2000);
  auto stall = [&](const char* fn, const char* reason, double n) {
    StallSample& s = t.stalls.emplace_back();
    s.function = t.strings.Intern(fn);
    s.reason = t.strings.Intern(reason);
    s.value = n;
  };
  const std::string p = "smsp__pcsamp_warps_issue_stalled_";
  stall("gemm_tiled_fp32_kernel", (p + "selected").c_str(), 400);
  stall("gemm_tiled_fp32_kernel", (p + "long_scoreboard").c_str(), 50);
  stall("gemm_tiled_fp32_kernel", (p + "short_scoreboard").c_str(), 100);
  stall("gemm_tiled_fp32_kernel", (p + "math_pipe_throttle").c_str(), 350);
  stall("triad_elementwise_kernel", (p + "selected").c_str(), 100);
  stall("triad_elementwise_kernel", (p + "long_scoreboard").c_str(), 600);
  stall("triad_elementwise_kernel", (p + "long_scoreboard_not_issued").c_str(), 100);
  stall("triad_elementwise_kernel", (p + "lg_throttle").c_str(), 100);
  stall("triad_elementwise_kernel", (p + "wait").c_str(), 100);
  return t;
}

TEST(StallSummary, FractionsPerKernelAndLayerTypeByHand) {
  Trace t = TwoKernelTrace();
  TraceSummary s = Summarize(t, MapGpuEvents(t));
  ASSERT_TRUE(s.stalls.unavailable.empty());
  ASSERT_EQ(s.stalls.kernels.size(), 2u);
  const KernelStallStats& gemm = s.stalls.kernels[1];  // 500 stalled < triad's 900
  const KernelStallStats& triad = s.stalls.kernels[0];
  ASSERT_EQ(gemm.name, "gemm_tiled_fp32_kernel");
  ASSERT_EQ(triad.name, "triad_elementwise_kernel");
  EXPECT_DOUBLE_EQ(*gemm.breakdown.MemoryFraction(), 0.1);
  EXPECT_DOUBLE_EQ(*gemm.breakdown.OnChipFraction(), 0.2);
  EXPECT_DOUBLE_EQ(gemm.breakdown.selected, 400);
  EXPECT_DOUBLE_EQ(*triad.breakdown.MemoryFraction(), 800.0 / 900.0);
  EXPECT_DOUBLE_EQ(*triad.breakdown.OnChipFraction(), 0.0);
  EXPECT_EQ(triad.reasons.front().first, "long_scoreboard");
  EXPECT_DOUBLE_EQ(triad.reasons.front().second, 700);
  EXPECT_EQ(gemm.layer_type, LayerType::kMatmul);
  EXPECT_FALSE(gemm.layer_type_inferred);
  // Layer types: one kernel each here; a second matmul kernel is summed by samples below.
  ASSERT_EQ(s.stalls.layer_types.size(), 2u);
  EXPECT_EQ(s.stalls.reasons_present,
            (std::vector<std::string>{"lg_throttle", "long_scoreboard", "math_pipe_throttle",
                                      "selected", "short_scoreboard", "wait"}));
}

TEST(StallSummary, LayerTypeWeightsBySamplesNotKernels) {
  Trace t = TwoKernelTrace();
  // A second matmul function with no captured kernel: typed by its name, marked inferred.
  StallSample& s = t.stalls.emplace_back();
  s.function = t.strings.Intern("ampere_sgemm_128x64_nn");
  s.reason = t.strings.Intern("long_scoreboard");
  s.value = 1500;
  TraceSummary sum = Summarize(t, MapGpuEvents(t));
  const LayerTypeStallStats* matmul = nullptr;
  for (const auto& l : sum.stalls.layer_types) {
    if (l.layer_type == LayerType::kMatmul) matmul = &l;
  }
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->kernels, 2);
  // (50 + 1500) / (500 + 1500), not the mean of 0.1 and 1.0.
  EXPECT_DOUBLE_EQ(*matmul->breakdown.MemoryFraction(), 1550.0 / 2000.0);
  bool inferred = false;
  for (const auto& k : sum.stalls.kernels) {
    if (k.name == "ampere_sgemm_128x64_nn") inferred = k.layer_type_inferred;
  }
  EXPECT_TRUE(inferred);
}

TEST(StallSummary, OnlySelectedSamplesGiveNoFractionNotZero) {
  Trace t;
  t.info.format = "opmap-capture";
  StallSample& s = t.stalls.emplace_back();
  s.function = t.strings.Intern("k");
  s.reason = t.strings.Intern("selected");
  s.value = 10;
  TraceSummary sum = Summarize(t, MapGpuEvents(t));
  ASSERT_EQ(sum.stalls.kernels.size(), 1u);
  EXPECT_FALSE(sum.stalls.kernels[0].breakdown.MemoryFraction().has_value());
  std::string json = RenderAnalyzeJson(sum, {"x", 0});
  EXPECT_NE(json.find("\"memory_stall_fraction\":null"), std::string::npos) << json;
}

TEST(StallSummary, NoSamplesIsUnavailableWithTheReason) {
  Trace t;
  t.info.format = "kineto-json";
  TraceSummary sum = Summarize(t, MapGpuEvents(t));
  EXPECT_EQ(sum.stalls.unavailable, "PyTorch-profiler (Kineto) traces carry no warp-stall reasons");
  std::string json = RenderAnalyzeJson(sum, {"x", 0});
  EXPECT_NE(json.find("\"stalls\":{\"unavailable\":\"PyTorch-profiler"), std::string::npos)
      << json;
  EXPECT_NE(RenderAnalyzeTable(sum, {"x", 0}).find("memory stalls: unavailable: "),
            std::string::npos);
}

TEST(StallSummary, JsonCarriesFractionsAndLaunches) {
  Trace t = TwoKernelTrace();
  TraceSummary sum = Summarize(t, MapGpuEvents(t), {.list_launches = true});
  ASSERT_EQ(sum.launches.size(), 2u);
  EXPECT_EQ(sum.launches[1].name, "triad_elementwise_kernel");
  EXPECT_EQ(sum.launches[1].start_ns, 2000);
  EXPECT_EQ(sum.launches[1].end_ns, 3000);
  std::string json = RenderAnalyzeJson(sum, {"x", 0, /*launches=*/true});
  EXPECT_NE(json.find("\"memory_stall_fraction\":0.888889"), std::string::npos) << json;
  EXPECT_NE(json.find("\"grid\":[128,1,1],\"block\":[256,1,1]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"unmapped_reason\":\"no_launch_record\""), std::string::npos) << json;
  EXPECT_EQ(RenderAnalyzeJson(sum, {"x", 0}).find("\"launches\""), std::string::npos);
}

// Nsight Compute rows joined to launches (StallSample::event) sum per module, weighted
// by kernel time like the layer types:
//   k1 in decoder_layer.0: long_scoreboard 2, selected 1, math 2, weight 100
//   k2 in decoder_layer.0: long_scoreboard 1, short_scoreboard 1,   weight 300
//   k3 outside any module: long_scoreboard 1, wait 3,                weight 50
//   decoder_layer.0: memory (200 + 300) / stalled (400 + 600) = 0.5, on-chip 300/1000 = 0.3
//   (no module): 50 / 200 = 0.25
TEST(StallSummary, PerModuleFromRowsJoinedToLaunches) {
  Trace t;
  t.info.format = "kineto-json";
  auto range = [&](const char* name, int64_t start, int64_t end) {
    Range& r = t.ranges.emplace_back();
    r.name = t.strings.Intern(name);
    r.kind = RangeKind::kNvtx;
    r.start_ns = start;
    r.dur_ns = end - start;
    r.process = 1;
    r.thread = 1;
  };
  range("decoder_layer.0", 0, 1000);
  range("demo::qkv", 100, 300);
  range("demo::gelu", 400, 600);
  range("demo::other", 2000, 2100);
  auto launch = [&](int64_t at, int64_t corr, int64_t dur) {
    ApiCall& a = t.api_calls.emplace_back();
    a.name = t.strings.Intern("cudaLaunchKernel");
    a.start_ns = at;
    a.dur_ns = 5;
    a.process = 1;
    a.thread = 1;
    a.correlation = corr;
    GpuEvent& g = t.gpu_events.emplace_back();
    g.name = t.strings.Intern("k" + std::to_string(corr));
    g.start_ns = 5000 + corr * 1000;
    g.dur_ns = dur;
    g.process = 1;
    g.correlation = corr;
  };
  launch(150, 1, 100);
  launch(450, 2, 300);
  launch(2050, 3, 50);
  auto row = [&](int32_t event, const char* reason, double ratio) {
    StallSample& s = t.stalls.emplace_back();
    s.function = t.gpu_events[event].name;
    s.reason = t.strings.Intern(reason);
    s.unit = StallUnit::kPerIssueRatio;
    s.value = ratio;
    s.weight = static_cast<double>(t.gpu_events[event].dur_ns);
    s.event = event;
  };
  row(0, "long_scoreboard", 2);
  row(0, "selected", 1);
  row(0, "math_pipe_throttle", 2);
  row(1, "long_scoreboard", 1);
  row(1, "short_scoreboard", 1);
  row(2, "long_scoreboard", 1);
  row(2, "wait", 3);
  TraceSummary sum = Summarize(t, MapGpuEvents(t));
  ASSERT_TRUE(sum.stalls.modules_unavailable.empty()) << sum.stalls.modules_unavailable;
  ASSERT_EQ(sum.stalls.modules.size(), 2u);
  EXPECT_EQ(sum.stalls.modules[0].module, "decoder_layer.0");
  EXPECT_EQ(sum.stalls.modules[0].module_type, "decoder_layer");
  EXPECT_DOUBLE_EQ(*sum.stalls.modules[0].breakdown.MemoryFraction(), 0.5);
  EXPECT_DOUBLE_EQ(*sum.stalls.modules[0].breakdown.OnChipFraction(), 0.3);
  EXPECT_EQ(sum.stalls.modules[1].module, "");
  EXPECT_DOUBLE_EQ(*sum.stalls.modules[1].breakdown.MemoryFraction(), 0.25);
  const std::string json = RenderAnalyzeJson(sum, {"x", 0});
  EXPECT_NE(json.find("\"module\":\"decoder_layer.0\",\"module_type\":\"decoder_layer\",\"rows\":5,"
                      "\"memory_stall_fraction\":0.500000"),
            std::string::npos)
      << json;
}

TEST(StallSummary, PcSamplesHaveNoModule) {
  Trace t = TwoKernelTrace();
  TraceSummary sum = Summarize(t, MapGpuEvents(t));
  EXPECT_TRUE(sum.stalls.modules.empty());
  EXPECT_EQ(sum.stalls.modules_unavailable,
            "stall rows are per function (PC sampling), not per launch: no module");
}

TEST(StallSummary, SamplesSurviveTheWire) {
  Trace t = TwoKernelTrace();
  BatchingOptions options;
  options.agent_id = "a";
  options.session_id = "s";
  options.max_records_per_batch = 1;  // stalls must ride in the last batch, after kernels
  auto batches = TraceToBatches(t, options);
  ASSERT_TRUE(batches.ok()) << batches.status();
  ASSERT_EQ(batches->size(), 2u);
  EXPECT_EQ(batches->back().stalls().function_id_size(), 9);
  SessionAssembler assembler;
  for (const auto& b : *batches) ASSERT_TRUE(assembler.Append(b).ok());
  Trace back = assembler.TakeTrace();
  TraceSummary sum = Summarize(back, MapGpuEvents(back));
  ASSERT_EQ(sum.stalls.kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(*sum.stalls.kernels[0].breakdown.MemoryFraction(), 800.0 / 900.0);

  t.stalls[0].unit = StallUnit::kPerIssueRatio;
  t.stalls[0].value = 0.25;
  auto refused = TraceToBatches(t, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("stalls[0].value"), std::string::npos);
  // Counts a double cannot hold exactly (fuzz finding 12: 2^64 - 1 from a ring), negative
  // or NaN ones are refused too: their cast to the wire's uint64 would be undefined.
  t.stalls[0].unit = StallUnit::kSamples;
  t.stalls[0].value = 9007199254740992.0;  // 2^53: the largest accepted
  EXPECT_TRUE(TraceToBatches(t, options).ok());
  for (double bad : {18446744073709551615.0, 9007199254740994.0, -1.0, std::nan("")}) {
    t.stalls[0].value = bad;
    auto out = TraceToBatches(t, options);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_NE(out.status().message().find("at most 2^53"), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace opmap::analysis
