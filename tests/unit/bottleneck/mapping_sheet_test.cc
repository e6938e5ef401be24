// BuildMappingSheet on a hand-built trace run through the real kernel mapper.
//
// Thread 1 (CPU, ns)                         stream 7 (GPU, ns)
//   aten::linear [500, 9500)                   E0 gemm     [100000, 130000) addmm#1 grid 66
//     aten::addmm#1 [1000, 9000)  launch 2000    E1 gelu     [131000, 135000) gelu#1
//   aten::gelu#1 [10000, 20000)   launch 11000   E2 lnorm    [136000, 141000) layer_norm#1
//   aten::layer_norm#1 [21000, 30000) 22000      E3 gemm     [150000, 180000) addmm#2 grid 66
//   aten::addmm#2 [144000, 152000) 145000        E4 gelu     [181000, 188000) gelu#2
//   aten::gelu#2 [153000, 160000)  154000        E5 lnorm    [189000, 194000) layer_norm#2
//   aten::layer_norm#2 [161000, 170000) 162000   E6 gemm     [200000, 230000) addmm#3 grid 132
//   aten::addmm#3 [171000, 180000) 172000        E7 triton   [240000, 242000) no launch record
// Every launch call lasts 5 µs. addmm and gelu record bf16 Input types; layer_norm ranges
// record no shapes but carry NVTX-style payloads flops=1e6, bytes=2e6 each.
#include "analysis/bottleneck/mapping_sheet.h"

#include <string>

#include "absl/strings/match.h"
#include "analysis/timeline/idle_time.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

constexpr char kGemm[] = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas";
constexpr char kGelu[] = "vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>";
constexpr char kNorm[] = "vectorized_layer_norm_kernel";

class SheetTest : public ::testing::Test {
 protected:
  int32_t Op(const std::string& name, int64_t start, int64_t end, const std::string& dims = "",
             const std::string& types = "") {
    Range r;
    r.kind = RangeKind::kCpuOp;
    r.name = t_.strings.Intern(name);
    r.start_ns = start;
    r.dur_ns = end - start;
    r.thread = 1;
    r.process = 100;
    r.input_dims = t_.strings.Intern(dims);
    r.input_types = t_.strings.Intern(types);
    t_.ranges.push_back(r);
    return static_cast<int32_t>(t_.ranges.size() - 1);
  }
  void Kernel(const char* name, int64_t start, int64_t end, int64_t corr, int64_t launch_at,
              int32_t grid_x = 0) {
    if (launch_at >= 0) {
      ApiCall a;
      a.name = t_.strings.Intern("cudaLaunchKernel");
      a.start_ns = launch_at;
      a.dur_ns = 5'000;
      a.correlation = corr;
      a.thread = 1;
      a.process = 100;
      t_.api_calls.push_back(a);
    }
    GpuEvent g;
    g.name = t_.strings.Intern(name);
    g.start_ns = start;
    g.dur_ns = end - start;
    g.stream = 7;
    g.correlation = corr;
    if (grid_x > 0) {
      g.grid = {grid_x, 1, 1};
      g.block = {128, 1, 1};
      g.registers_per_thread = 168;
      g.shared_memory_bytes = 49152;
    }
    t_.gpu_events.push_back(g);
  }

  void SetUp() override {
    const std::string small = "[[512], [128, 512], [512, 512], [], []]";  // 2·128·512·512
    const std::string large = "[[2048], [128, 512], [512, 2048], [], []]";
    const std::string mm_types =
        R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])";
    const std::string gelu_types = R"(["c10::BFloat16", ""])";
    Op("aten::linear", 500, 9'500);
    Op("aten::addmm", 1'000, 9'000, small, mm_types);
    Op("aten::gelu", 10'000, 20'000, "[[128, 2048], []]", gelu_types);
    t_.ranges[Op("aten::layer_norm", 21'000, 30'000)].flops = 1'000'000;
    Op("aten::addmm", 144'000, 152'000, small, mm_types);
    Op("aten::gelu", 153'000, 160'000, "[[128, 2048], []]", gelu_types);
    t_.ranges[Op("aten::layer_norm", 161'000, 170'000)].flops = 1'000'000;
    Op("aten::addmm", 171'000, 180'000, large, mm_types);
    for (Range& r : t_.ranges) {
      if (r.flops != kNone) r.bytes = 2'000'000;
    }
    Kernel(kGemm, 100'000, 130'000, 1, 2'000, 66);
    Kernel(kGelu, 131'000, 135'000, 2, 11'000);
    Kernel(kNorm, 136'000, 141'000, 3, 22'000);
    Kernel(kGemm, 150'000, 180'000, 4, 145'000, 66);
    Kernel(kGelu, 181'000, 188'000, 5, 154'000);
    Kernel(kNorm, 189'000, 194'000, 6, 162'000);
    Kernel(kGemm, 200'000, 230'000, 7, 172'000, 132);
    Kernel("triton_poi_fused_add_0", 240'000, 242'000, 99, -1);
    mapping_ = MapGpuEvents(t_);
    auto env = EnvelopeForGpuName("NVIDIA H100 80GB HBM3");
    ASSERT_TRUE(env.has_value());
    env_ = *env;
  }

  Trace t_;
  MappingResult mapping_;
  HardwareEnvelope env_;
};

TEST_F(SheetTest, OperatorsKernelsSharesAndFlops) {
  ASSERT_EQ(mapping_.by_rule[static_cast<int>(MappingRule::kLaunchNesting)], 7);
  MappingSheet s = BuildMappingSheet(t_, mapping_, {.envelope = &env_});
  EXPECT_EQ(s.gpu_time_ns, 113'000);  // 3·30 + 4 + 5 + 7 + 5 + 2 µs
  ASSERT_EQ(s.operators.size(), 3u);  // aten::linear launched nothing itself: no row
  EXPECT_EQ(s.operators[0].name, "aten::addmm");
  EXPECT_EQ(s.operators[1].name, "aten::gelu");  // 11 µs
  EXPECT_EQ(s.operators[2].name, "aten::layer_norm");  // 10 µs

  const SheetOperator& mm = s.operators[0];
  EXPECT_EQ(mm.layer_type, LayerType::kMatmul);
  EXPECT_EQ(mm.instances, 3);
  EXPECT_EQ(mm.gpu_time_ns, 90'000);
  EXPECT_NEAR(mm.share, 90.0 / 113.0, 1e-12);
  // 2·128·512·512 + 128·512 (bias) = 67,174,400 twice + 2·128·2048·512 + 128·2048 =
  // 268,697,600 → 403,046,400; the enclosing aten::linear adds nothing (one level).
  // Bytes bf16: (512 + 65,536 + 262,144 + 65,536)·2 = 787,456 twice + (2,048 + 65,536 +
  // 1,048,576 + 262,144)·2 = 2,756,608 → 4,331,520.
  ASSERT_TRUE(mm.flops.has_value());
  EXPECT_EQ(*mm.flops, 403'046'400.0);
  ASSERT_TRUE(mm.figures.bytes.has_value());
  EXPECT_EQ(*mm.figures.bytes, 4'331'520.0);
  EXPECT_EQ(mm.bytes_basis, "compulsory bytes from shapes");
  EXPECT_TRUE(absl::StrContains(mm.flops_formula, "2·M·N·K")) << mm.flops_formula;
  // Two groups (the two shapes); intensity 403,046,400 / 4,331,520 = 93.05 FLOP/B is below
  // the bf16 ridge 295.3: the roofline expects memory-bound, whatever the layer type.
  ASSERT_EQ(mm.groups.size(), 2u);
  EXPECT_NEAR(*mm.intensity, 93.0496, 1e-4);
  EXPECT_EQ(mm.expected, BottleneckClass::kMemoryBound);
  ASSERT_EQ(mm.kernels.size(), 1u);
  const SheetKernel& k = mm.kernels[0];
  EXPECT_EQ(k.name, kGemm);
  EXPECT_EQ(k.count, 3);
  EXPECT_EQ(k.grid, (std::array<int32_t, 3>{66, 1, 1}));  // 2 of 3 launches
  EXPECT_EQ(k.block, (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 168);
  EXPECT_EQ(k.shared_memory_bytes, 49152);
  // Observed: U_c = 403046400 / (90e-6 · 989.4e12) = 0.0045263, U_m = 4331520 / (90e-6 ·
  // 3.35e12) = 0.014367: both < 0.6 → latency-occupancy.
  EXPECT_EQ(mm.observed.cls, BottleneckClass::kLatencyOccupancy) << mm.observed.summary;
  EXPECT_NEAR(*mm.observed.u_compute, 0.0045263, 1e-7);
  EXPECT_NEAR(*mm.observed.u_memory, 0.0143665, 1e-7);
  // Idle before its kernels: 9 µs before E3 (launched at 145 µs, after the stream went
  // idle at 141 µs: host wait) + 6 µs before E6 (launched at 172 µs: not host wait).
  // Host-wait share = 9 / (90 + 15).
  bool saw_host = false;
  for (const Evidence& e : mm.observed.evidence) {
    if (e.figure == "host-wait idle share") {
      saw_host = true;
      EXPECT_NEAR(*e.value, 9.0 / 105.0, 1e-12);
      EXPECT_FALSE(e.met);
    }
    if (e.figure == "GPU time ÷ launch call time") {
      EXPECT_DOUBLE_EQ(*e.value, 6.0);  // 90 µs ÷ 3 launches × 5 µs
    }
  }
  EXPECT_TRUE(saw_host);

  // gelu [128,2048] bf16: 8 FLOPs per element → 2,097,152 per instance; bytes (262,144 ·
  // 2)·2 = 1,048,576. Its kernels are short (2 of 2 < 10 µs) but ran right after the GEMMs
  // (1 µs gaps): not launch-bound. Vector path: U_m = 2,097,152 / (11e-6 · 3.35e12) = 0.0569.
  const SheetOperator& gelu = s.operators[1];
  EXPECT_EQ(gelu.layer_type, LayerType::kElementwise);
  ASSERT_TRUE(gelu.flops.has_value());
  EXPECT_EQ(*gelu.flops, 4'194'304.0);
  EXPECT_EQ(*gelu.figures.bytes, 2'097'152.0);
  EXPECT_TRUE(gelu.figures.vector_path);
  EXPECT_NEAR(*gelu.observed.u_memory, 2097152 / (11e-6 * 3.35e12), 1e-9);
  EXPECT_EQ(gelu.observed.cls, BottleneckClass::kLatencyOccupancy) << gelu.observed.summary;
  EXPECT_EQ(gelu.expected, BottleneckClass::kMemoryBound);

  // NVTX payloads: flops 2e6, bytes 4e6 → intensity 0.5 FLOP/B, U_m = 4e6 / (10e-6·3.35e12).
  const SheetOperator& norm = s.operators[2];
  EXPECT_EQ(norm.layer_type, LayerType::kNorm);
  EXPECT_EQ(*norm.flops, 2e6);
  EXPECT_EQ(norm.flops_formula, "NVTX payload flops=1000000");
  ASSERT_TRUE(norm.intensity.has_value());
  EXPECT_DOUBLE_EQ(*norm.intensity, 0.5);
  EXPECT_NEAR(*norm.observed.u_memory, 4e6 / 3.35e7, 1e-12);
  EXPECT_EQ(norm.expected, BottleneckClass::kMemoryBound);
  EXPECT_EQ(norm.observed.cls, BottleneckClass::kLatencyOccupancy) << norm.observed.summary;
  // The groups: addmm × 2 shapes, gelu, layer_norm; all costed, all classified.
  EXPECT_EQ(s.groups.size(), 4u);
  EXPECT_EQ(s.mapped_ns, 111'000);
  EXPECT_EQ(s.costed_ns, 111'000);
  EXPECT_EQ(s.classified_ns, 111'000);

  bool unmapped_note = false;
  for (const std::string& n : s.notes) unmapped_note |= absl::StrContains(n, "1 GPU events (2000 ns)");
  EXPECT_TRUE(unmapped_note);
}

TEST_F(SheetTest, MeasuredBytesWinOverShapes) {
  // Nsight Compute rows joined to E0 and E3 (the two small addmm launches) measured 1.0e6
  // and 1.2e6 DRAM bytes: that group's bytes are measured; the large addmm keeps its
  // compulsory bytes from shapes, and the operator row says it mixes both.
  t_.measured = {{0, 1.0e6, std::nullopt}, {3, 1.2e6, std::nullopt}};
  MappingSheet s = BuildMappingSheet(t_, mapping_, {.envelope = &env_});
  const SheetGroup* small = nullptr;
  const SheetGroup* large = nullptr;
  for (const SheetGroup& g : s.groups) {
    if (g.op != "aten::addmm") continue;
    (g.instances == 2 ? small : large) = &g;
  }
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(*small->cost.bytes, 2.2e6);
  EXPECT_EQ(small->cost.bytes_source, "Nsight Compute (measured)");
  EXPECT_EQ(*small->cost.flops, 2 * 67'174'400.0);  // FLOPs still from the formula
  EXPECT_EQ(small->cost.flops_source, "formula");
  EXPECT_EQ(*large->cost.bytes, 2'756'608.0);
  EXPECT_EQ(large->cost.bytes_source, "formula");
  EXPECT_EQ(s.operators[0].bytes_basis, "Nsight Compute (measured) + compulsory bytes from shapes");
  EXPECT_EQ(*s.operators[0].figures.bytes, 2.2e6 + 2'756'608.0);

  // Only one of the two launches profiled: its mean, scaled to both, and said so.
  t_.measured = {{0, 1.0e6, 4.0e8}};
  s = BuildMappingSheet(t_, mapping_, {.envelope = &env_});
  for (const SheetGroup& g : s.groups) {
    if (g.op != "aten::addmm" || g.instances != 2) continue;
    EXPECT_EQ(*g.cost.bytes, 2.0e6);
    EXPECT_EQ(g.cost.bytes_source, "Nsight Compute (measured on 1 of 2 kernels, mean scaled to all)");
    EXPECT_EQ(*g.cost.flops, 8.0e8);  // measured FLOPs win too
  }
}

TEST_F(SheetTest, HostWaitMatchesTheTimelineIdleSplit) {
  // The sheet splits idle per operator with idle_time.h's host-wait rule; on this trace
  // (no overlapping events) the per-operator host wait must sum to the stream's.
  MappingSheet s = BuildMappingSheet(t_, mapping_, {.envelope = &env_});
  std::vector<StreamIdleTime> idle = ComputeIdleTime(t_, mapping_.LaunchApiIndex());
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].ns(IdleCategory::kHostWait), 9'000);
}

TEST_F(SheetTest, FusionCandidateRunsWithOccurrencesAndBound) {
  MappingSheet s = BuildMappingSheet(t_, mapping_, {.envelope = &env_});
  ASSERT_EQ(s.fusion.size(), 1u);  // the lone triton kernel is a run of 1 < 2
  const FusionCandidate& c = s.fusion[0];
  EXPECT_EQ(c.kernels, (std::vector<std::string>{kGelu, kNorm}));
  EXPECT_EQ(c.operators, (std::vector<std::string>{"aten::gelu", "aten::layer_norm"}));
  EXPECT_EQ(c.occurrences, 2);
  EXPECT_EQ(c.stream, 7);
  EXPECT_EQ(c.gpu_time_ns, 21'000);  // (4 + 5) + (7 + 5) µs
  // (L − 1) × mean = Σ − Σ/L: (9 − 9/2) + (12 − 12/2) = 4.5 + 6 µs.
  EXPECT_EQ(c.saving_bound_ns, 10'500);
  EXPECT_EQ(c.before, kGemm);
  EXPECT_EQ(c.after, kGemm);

  MappingSheet strict = BuildMappingSheet(t_, mapping_, {.envelope = &env_,
                                                          .large_kernel_ns = 5'000});
  // Only gelu#1 (4 µs) is below 5 µs, and it stands alone: no run of two.
  EXPECT_TRUE(strict.fusion.empty());
}

TEST_F(SheetTest, JsonAndSectionSayUnavailable) {
  MappingSheet s = BuildMappingSheet(t_, mapping_, {});  // no envelope
  EXPECT_EQ(s.operators[0].observed.cls, BottleneckClass::kUnclassified);
  text::JsonWriter w;
  WriteMappingSheetJson(s, w);
  const std::string& json = w.str();
  EXPECT_TRUE(absl::StrContains(json, "\"flops\":403046400,")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"input_dims\":\"[[2048], [128, 512], [512, 2048], [], []]\""));
  EXPECT_TRUE(absl::StrContains(json, "\"bytes_source\":\"formula\""));
  EXPECT_TRUE(absl::StrContains(json, "\"costed_share\":1,") ||
              absl::StrContains(json, "\"costed_share\":1.0")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"grid\":[66,1,1]"));
  EXPECT_TRUE(absl::StrContains(json, "\"saving_bound_ns\":10500"));
  EXPECT_TRUE(absl::StrContains(json, "\"missing\":\"no hardware envelope\""));

  DocSection d = MappingSheetSection(s, 2);
  ASSERT_EQ(d.tables.size(), 5u);  // operators, groups, kernels, evidence, fusion
  ASSERT_EQ(d.tables[0].rows.size(), 2u);  // top 2
  EXPECT_EQ(d.tables[0].rows[0][3], "90.0");
  EXPECT_EQ(d.tables[0].rows[0][4], "79.6");
  ASSERT_EQ(d.tables[1].rows.size(), 2u);  // groups: top 2, the two small addmms first (60 µs)
  EXPECT_EQ(d.tables[1].rows[0][1], "[[512], [128, 512], [512, 512], [], []]");
  EXPECT_EQ(d.tables[2].rows[0][3], "66x1x1");
  EXPECT_EQ(d.tables[4].rows.size(), 1u);
}

}  // namespace
}  // namespace opmap::analysis
