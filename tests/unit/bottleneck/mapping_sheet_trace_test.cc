// The mapping sheet on the shared H100 BERT trace
// (traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz, one stream, 61 GPU
// events). Every figure below was recomputed by hand from the raw JSON with a separate
// script (Decimal µs → ns; kernel → cpu_op by External id; per-stream gaps against the
// latest end so far; host wait when the launch's ts is after it):
//   Σ GPU event durations                    309,437 ns
//   aten::addmm: 26 instances, 26 kernels,   197,598 ns; FLOPs Σ 2·M·N·K over the Input
//     Dims (20× 141·512·512, 4× 141·512·2048 twice, 1× 141·512·30522) = 8,029,194,240;
//     idle before its kernels 2,308,154 ns, all of it host wait → 2308154 / 2505752
//   most frequent addmm kernel: cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32,
//     17 launches, 98,718 ns, grid 40x2x1, block 128, 88 registers, 33,792 B smem
//   aten::_flash_attention_forward: 4 instances, 37,408 ns, 4 × 40,716,288 FLOPs
//   aten::native_layer_norm: 10 instances, 30,912 ns, no FLOPs formula
//   fusion: (add, layer_norm) 8 times, 37,665 ns, bound Σ(Σ − Σ/2) = 18,833 ns
// The GPU idles 92% of this window waiting for the host, so the eager model is
// host-starved operator by operator.
#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/bottleneck/mitigations.h"
#include "analysis/import/kineto_importer.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

constexpr char kBertTrace[] = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";

const SheetOperator* Find(const MappingSheet& s, const std::string& name) {
  for (const SheetOperator& op : s.operators) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

TEST(SheetOnTrace, H100Bert) {
  OPMAP_REQUIRE_SHARED(kBertTrace);
  absl::StatusOr<Trace> t =
      ImportKinetoBytes(testing::ReadFileOrDie(testing::SharedPath(kBertTrace)));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->info.gpu_names.empty());
  auto env = EnvelopeForGpuName(t->info.gpu_names[0]);
  ASSERT_TRUE(env.has_value());
  const MappingResult mapping = MapGpuEvents(*t);
  const MappingSheet s = BuildMappingSheet(*t, mapping, {.envelope = &*env});

  EXPECT_EQ(s.gpu_time_ns, 309'437);
  ASSERT_EQ(s.operators.size(), 10u);
  const SheetOperator& mm = s.operators[0];
  EXPECT_EQ(mm.name, "aten::addmm");
  EXPECT_EQ(mm.instances, 26);
  EXPECT_EQ(mm.gpu_time_ns, 197'598);
  EXPECT_NEAR(mm.share, 197598.0 / 309437.0, 1e-12);
  ASSERT_TRUE(mm.flops.has_value()) << mm.flops_formula;
  // 2·M·N·K + M·N (bias) over the 26 instances (TraceLens' counts, tests/unit/roofline).
  EXPECT_EQ(*mm.flops, 8'036'168'946.0);
  // Its four shapes are four groups; every one is below the bf16 ridge (90.9–110 FLOP/B <
  // 295.3), so the roofline expects memory-bound, as TraceLens says.
  EXPECT_EQ(mm.groups.size(), 4u);
  EXPECT_EQ(mm.expected, BottleneckClass::kMemoryBound);
  EXPECT_EQ(mm.observed.cls, BottleneckClass::kHostStarved);
  ASSERT_EQ(mm.observed.evidence.size(), 3u);
  EXPECT_NEAR(*mm.observed.evidence[2].value, 2308154.0 / 2505752.0, 1e-12);
  EXPECT_EQ(mm.figures.host_wait_idle_ns, 2'308'154);
  EXPECT_EQ(mm.figures.idle_ns, 2'308'154);
  // U_c is computed even though host wait decided: 8036168946 / (197598e-9 · 989.4e12).
  EXPECT_NEAR(*mm.observed.u_compute, 8036168946.0 / (197598e-9 * 989.4e12), 1e-12);
  ASSERT_EQ(mm.kernels.size(), 4u);
  const SheetKernel& k = mm.kernels[0];
  EXPECT_TRUE(absl::StrContains(k.name, "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32"))
      << k.name;
  EXPECT_EQ(k.count, 17);
  EXPECT_EQ(k.gpu_time_ns, 98'718);
  EXPECT_EQ(k.grid, (std::array<int32_t, 3>{40, 2, 1}));
  EXPECT_EQ(k.block, (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 88);
  EXPECT_EQ(k.shared_memory_bytes, 33'792);

  // The flash kernels' innermost range is aten::_flash_attention_forward; the group is
  // costed at its caller, whose arguments carry the causal flag (as TraceLens reports it).
  EXPECT_EQ(Find(s, "aten::_flash_attention_forward"), nullptr);
  const SheetOperator* flash = Find(s, "aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(flash, nullptr);
  EXPECT_EQ(flash->instances, 4);
  EXPECT_EQ(flash->gpu_time_ns, 37'408);
  EXPECT_EQ(*flash->flops, 4 * 40'716'288.0);
  EXPECT_EQ(flash->layer_type, LayerType::kAttention);

  const SheetOperator* norm = Find(s, "aten::layer_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->instances, 10);
  EXPECT_EQ(norm->gpu_time_ns, 30'912);
  ASSERT_TRUE(norm->flops.has_value());
  EXPECT_EQ(*norm->flops, 10 * 364'032.0);  // 5·N + 6·C, N = 141·512, C = 512
  EXPECT_EQ(*norm->figures.bytes, 10 * 294'912.0);
  EXPECT_TRUE(norm->figures.vector_path);

  ASSERT_FALSE(s.fusion.empty());
  const FusionCandidate& f = s.fusion[0];
  EXPECT_EQ(f.operators, (std::vector<std::string>{"aten::add", "aten::native_layer_norm"}));
  EXPECT_EQ(f.occurrences, 8);
  EXPECT_EQ(f.gpu_time_ns, 37'665);
  EXPECT_EQ(f.saving_bound_ns, 18'833);

  // Mitigations straight from the sheet's rows: host-starved → async host pipeline, bounded
  // by the host-wait idle, against the device's GPU span.
  int64_t first = INT64_MAX, last = 0;
  for (const GpuEvent& e : t->gpu_events) {
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns());
  }
  std::vector<MitigationInput> in;
  for (const SheetOperator& op : s.operators) in.push_back({op.figures, op.observed});
  std::vector<Mitigation> m = ProposeMitigations(in, last - first, &*env, 3);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].subject, "aten::addmm");
  EXPECT_EQ(m[0].action, "async host pipeline");
  EXPECT_EQ(m[0].gain_bound_ns, 2'308'154);
  EXPECT_NEAR(*m[0].gain_bound_fraction, 2308154.0 / (last - first), 1e-12);
}

}  // namespace
}  // namespace opmap::analysis
