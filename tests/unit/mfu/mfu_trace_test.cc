// FLOPs and per-operator MFU on the shared H100 BERT trace
// (traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz, deviceProperties
// "NVIDIA H100 80GB HBM3"). An operator's GPU time is the sum of the kernels whose
// External id equals the operator's (each op below launches exactly one kernel).
//
// Precision: the trace's "Input type" says c10::BFloat16 for these operators, but the
// importer's Range does not carry Input type, so the test takes BF16 from the kernel
// names (cutlass/xmma "bf16", flash kernels with the BF16 inputs seen in the raw JSON).
#include <string>

#include "absl/strings/match.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/mfu/op_flops.h"
#include "analysis/mfu/operator_mfu.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

constexpr char kTrace[] = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";

struct OpCase {
  int64_t external_id;
  const char* op;
  const char* dims;
  double flops;        // by hand
  int64_t kernel_ns;   // by hand from the JSON's kernel dur (µs)
  double mfu;          // flops / (kernel_ns·1e-9 · 989.4e12)
};

TEST(MfuOnTrace, H100BertOperators) {
  OPMAP_REQUIRE_SHARED(kTrace);
  absl::StatusOr<Trace> t =
      ImportKinetoBytes(testing::ReadFileOrDie(testing::SharedPath(kTrace)));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->info.gpu_names.empty());
  EXPECT_EQ(t->info.gpu_names[0], "NVIDIA H100 80GB HBM3");
  auto env = EnvelopeForGpuName(t->info.gpu_names[0]);
  ASSERT_TRUE(env.has_value());
  const double bf16_peak = *env->PeakFlopsPerS(Precision::kBf16);
  EXPECT_DOUBLE_EQ(bf16_peak, 989.4e12);

  const OpCase cases[] = {
      // addmm bias [512], [141,512] @ [512,512] (QKV projection):
      //   2·M·N·K + M·N (bias) = 2·141·512·512 + 141·512 = 73,924,608 + 72,192 = 73,996,800
      //   kernel 5.824 µs → 73996800 / (5.824e-6 · 989.4e12) = 73996800 / 5.7622656e9 = 0.0128416
      {49, "aten::addmm", "[[512], [141, 512], [512, 512], [], []]", 73996800, 5824, 0.0128416},
      // addmm bias [2048], [141,512] @ [512,2048] (FFN up):
      //   2·141·2048·512 + 141·2048 = 295,698,432 + 288,768 = 295,987,200 FLOPs
      //   kernel 6.047 µs → 295987200 / (6.047e-6 · 989.4e12) = 295987200 / 5.9829018e9 = 0.0494722
      {124, "aten::addmm", "[[2048], [141, 512], [512, 2048], [], []]", 295987200, 6047, 0.0494722},
      // _flash_attention_forward q,k,v [B,S,H,D] = [1,141,8,64]:
      //   4·B·H·Sq·Sk·D = 4·1·8·141·141·64 = 32·19881·64 = 636,192·64 = 40,716,288 FLOPs
      //   kernel 10.08 µs → 40716288 / (10.08e-6 · 989.4e12) = 40716288 / 9.973152e9 = 0.0040826
      {87, "aten::_flash_attention_forward",
       "[[1, 141, 8, 64], [1, 141, 8, 64], [1, 141, 8, 64], [], [], [], [], [], [], [], [], [], "
       "[], [], []]",
       40716288, 10080, 0.0040826},
  };
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.op + std::to_string(c.external_id));
    const Range* op = nullptr;
    for (const Range& r : t->ranges) {
      if (r.kind == RangeKind::kCpuOp && r.external_id == c.external_id &&
          t->strings.Get(r.name) == c.op) {
        op = &r;
      }
    }
    ASSERT_NE(op, nullptr);
    const std::string_view dims = t->strings.Get(op->input_dims);
    // The importer keeps the raw JSON text; compare after the parser, not byte for byte.
    auto got = ParseInputDims(dims);
    auto want = ParseInputDims(c.dims);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) EXPECT_EQ((*got)[i].dims, (*want)[i].dims);

    FlopsEstimate f = OpFlopsFromInputDims(c.op, dims);
    ASSERT_TRUE(f.flops.has_value()) << f.reason;
    EXPECT_EQ(*f.flops, c.flops) << f.formula;

    int64_t gpu_ns = 0;
    bool bf16 = false;
    for (const GpuEvent& g : t->gpu_events) {
      if (g.kind == GpuEventKind::kKernel && g.external_id == c.external_id) {
        gpu_ns += g.dur_ns;
        const std::string_view k = t->strings.Get(g.name);
        bf16 |= k.find("bf16") != std::string_view::npos || k.find("flash") != std::string_view::npos;
      }
    }
    EXPECT_EQ(gpu_ns, c.kernel_ns);
    ASSERT_TRUE(bf16) << "expected a BF16 kernel";
    auto mfu = Utilization(*f.flops, gpu_ns, env->PeakFlopsPerS(Precision::kBf16));
    ASSERT_TRUE(mfu.has_value());
    EXPECT_NEAR(*mfu, c.mfu, 5e-6);
  }
}

// Every addmm and flash-attention instance of the trace, summed per operator: the
// figures below were computed from the raw JSON with Python (each instance's Input Dims
// through the formulas; GPU time = its kernels by External id).
//   flash: 4 instances, Σ 4·1·8·141·141·64 = 162,865,152 FLOPs over 37,408 ns
//          → 162865152 / (37408e-9 · 989.4e12) = 0.0044004
//   addmm: 26 instances, 8,036,168,946 FLOPs (2·M·N·K + M·N for the bias, as TraceLens
//          counts them: 17·73,996,800 + 4,411,192,050 + 4·295,770,624 + 4·295,987,200)
//          over 197,598 ns → 8036168946 / (197598e-9 · 989.4e12) = 0.0411050
// Precision comes from "Input type" (c10::BFloat16).
TEST(MfuOnTrace, OperatorRowsSumInstancesWithTheirPrecision) {
  OPMAP_REQUIRE_SHARED(kTrace);
  absl::StatusOr<Trace> t =
      ImportKinetoBytes(testing::ReadFileOrDie(testing::SharedPath(kTrace)));
  ASSERT_TRUE(t.ok()) << t.status();
  auto env = EnvelopeForGpuName(t->info.gpu_names[0]);
  ASSERT_TRUE(env.has_value());
  const MappingResult mapping = MapGpuEvents(*t);
  MfuOptions options;
  options.envelope = &*env;
  const MfuReport r = ComputeOperatorMfu(*t, mapping, options);
  EXPECT_EQ(r.envelope_name, "H100 SXM5 80GB");
  auto row = [&](std::string_view name) -> const OperatorMfuRow* {
    for (const auto& o : r.operators) if (o.name == name) return &o;
    return nullptr;
  };
  const OperatorMfuRow* flash = row("aten::_flash_attention_forward");
  ASSERT_NE(flash, nullptr);
  EXPECT_EQ(flash->instances, 4);
  EXPECT_EQ(flash->flops, 162865152.0);
  EXPECT_EQ(flash->gpu_time_with_flops_ns, 37408);
  ASSERT_TRUE(flash->precision.has_value());
  EXPECT_EQ(*flash->precision, Precision::kBf16);
  EXPECT_EQ(flash->precision_source, "Input type");
  ASSERT_TRUE(flash->mfu.has_value());
  EXPECT_NEAR(*flash->mfu, 0.0044004, 5e-7);
  const OperatorMfuRow* addmm = row("aten::addmm");
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(addmm->instances, 26);
  EXPECT_EQ(addmm->flops, 8036168946.0);
  EXPECT_EQ(addmm->gpu_time_with_flops_ns, 197598);
  ASSERT_TRUE(addmm->mfu.has_value());
  EXPECT_NEAR(*addmm->mfu, 0.0411050, 5e-7);
  // Operators without a formula hold GPU time but no FLOPs, and say why.
  const OperatorMfuRow* other = nullptr;
  for (const auto& o : r.operators) if (o.instances_with_flops == 0) { other = &o; break; }
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->mfu.has_value());
  EXPECT_NE(other->unavailable.find("no FLOPs/bytes formula"), std::string::npos)
      << other->unavailable;
  // Without an envelope: achieved FLOP/s, never an MFU.
  options.envelope = nullptr;
  const MfuReport bare = ComputeOperatorMfu(*t, mapping, options);
  EXPECT_NE(bare.unavailable.find("no hardware envelope"), std::string::npos);
  for (const auto& o : bare.operators) EXPECT_FALSE(o.mfu.has_value()) << o.name;
}

TEST(MfuOnTrace, B200TraceGetsTheB200Envelope) {
  constexpr char kB200[] = "traces/tl_b200_eager_trace.json.gz";
  OPMAP_REQUIRE_SHARED(kB200);
  absl::StatusOr<Trace> t = ImportKinetoBytes(testing::ReadFileOrDie(testing::SharedPath(kB200)));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->info.gpu_names.empty());
  auto env = EnvelopeForGpuName(t->info.gpu_names[0]);
  ASSERT_TRUE(env.has_value()) << t->info.gpu_names[0];
  EXPECT_EQ(env->sm_count, 148);
  EXPECT_DOUBLE_EQ(*env->PeakFlopsPerS(Precision::kBf16), 2250e12);
  EXPECT_DOUBLE_EQ(env->hbm_bytes_per_s, 8e12);
  auto gb200 = EnvelopeForGpuName("NVIDIA GB200");  // its own envelope: other peaks
  ASSERT_TRUE(gb200.has_value());
  EXPECT_NE(gb200->name, env->name);
  EXPECT_DOUBLE_EQ(*gb200->PeakFlopsPerS(Precision::kBf16), 2500e12);
}

}  // namespace
}  // namespace opmap::analysis
