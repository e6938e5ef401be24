// Serving costs (docs/metrics.md): the step a range ran in (analysis/serving/step_of_range.h),
// paged attention from its step's per-request sums, the aiter / SGLang fused ops, and a
// mapping-sheet group whose instances ran in different steps. Every figure is worked by hand
// in the comment beside it.
#include <cmath>
#include <string>
#include <vector>

#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/roofline/op_args.h"
#include "analysis/roofline/op_cost.h"
#include "analysis/roofline/range_context.h"
#include "analysis/serving/step_annotation.h"
#include "analysis/serving/step_of_range.h"
#include "gtest/gtest.h"

namespace opmap::analysis::serving_cost_test {
namespace {

// One prefill chunk (3 new tokens on 7 cached: sq 3, sk 10) and one decode (sq 1, sk 20).
constexpr char kMixedStep[] =
    "execute_4_context_1(sq3sk10sqsq9sqsk30)_generation_1(sq1sk20sqsq1sqsk20)";

OpCost CostIn(std::string_view op, std::string_view dims, std::string_view types,
              const StepAnnotation* step, std::string_view concrete = "") {
  auto args = ParseOpArgs(dims, types, concrete, "");
  EXPECT_TRUE(args.ok()) << args.status();
  CostContext context;
  context.step = step;
  return OpCostFor(op, args.ok() ? *args : std::vector<OpArg>{}, context);
}

void ExpectCost(const OpCost& c, double flops, double bytes) {
  ASSERT_TRUE(c.flops.has_value()) << c.missing;
  ASSERT_TRUE(c.bytes.has_value()) << c.missing;
  EXPECT_DOUBLE_EQ(*c.flops, flops) << c.formula;
  EXPECT_DOUBLE_EQ(*c.bytes, bytes) << c.bytes_formula;
}

// vLLM unified_attention_with_output(q [4, 8, 64], k [4, 2, 64], v [4, 2, 64], out, ...).
constexpr char kVllmDims[] = "[[4, 8, 64], [4, 2, 64], [4, 2, 64], [4, 8, 64], [], [], [], [0]]";
constexpr char kVllmTypes[] =
    R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"])";

TEST(PagedAttention, VllmFromTheStepSums) {
  std::optional<StepAnnotation> step = ParseStepAnnotation(kMixedStep);
  ASSERT_TRUE(step && HasAttentionSums(*step));
  const OpCost c = CostIn("vllm::unified_attention_with_output", kVllmDims, kVllmTypes, &*step);
  // H_Q·(d_qk+d_v)·(2·c_sqsk − c_sqsq + 2·g_sqsk) = 8·128·(60 − 9 + 40) = 8·128·91 = 93184.
  // Bytes: (c_sq+g_sq)·(H_Q+H_KV)·(d_qk+d_v)·2 = 4·10·128·2 = 10240, plus the cached K and V
  // ((10−3)+(20−1))·H_KV·(d_qk+d_v)·2 = 26·2·128·2 = 13312: 23552.
  ExpectCost(c, 93184, 23552);
  // Model FLOPs leave the causal block undiscounted: 8·128·2·(30 + 20) = 102400.
  EXPECT_DOUBLE_EQ(*c.model_flops, 102400);
  EXPECT_EQ(c.family, "attention");
  EXPECT_TRUE(c.matrix);
  EXPECT_EQ(c.compute_dtype, "c10::BFloat16");
  EXPECT_NE(c.formula.find(kMixedStep), std::string::npos) << c.formula;
}

TEST(PagedAttention, SglangReadsTheCacheAtItsOwnDtype) {
  std::optional<StepAnnotation> step = ParseStepAnnotation(kMixedStep);
  ASSERT_TRUE(step);
  // paged_attention_ragged(out, workspace, q [4, 8, 64], k_cache, v_cache [pages, page, 2, 64],
  // kv_indptr, kv_page_indices, kv_last_page_lens, ...), an fp8 cache.
  const OpCost c = CostIn(
      "sglang_profiler::attention_paged_attention_ragged",
      "[[4, 8, 64], [1000], [4, 8, 64], [100, 16, 2, 64], [100, 16, 2, 64], [5], [100], [4], "
      "[], [1], [1], []]",
      R"(["c10::BFloat16", "unsigned char", "c10::BFloat16", "c10::Float8_e4m3fn", )"
      R"("c10::Float8_e4m3fn", "int", "int", "int", "", "float", "float", ""])",
      &*step);
  // Same FLOPs as vLLM's; the cached K and V at 1 byte: 10240 + 26·2·128·1 = 16896.
  ExpectCost(c, 93184, 16896);
}

TEST(PagedAttention, TheSharedDecodeStepsByHand) {
  // vLLM gpt-oss decode: 32 requests, Σ sk 55086; H_Q 64, H_KV 8, d 64.
  std::optional<StepAnnotation> vllm = ParseStepAnnotation(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  ASSERT_TRUE(vllm);
  // 64·128·2·55086 = 902529024; 32·72·128·2 = 589824 + 55054·8·128·2 = 112750592.
  ExpectCost(CostIn("vllm::unified_attention_with_output",
                    "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]",
                    kVllmTypes, &*vllm),
             902529024, 113340416);
  // SGLang Qwen3-8B decode: 32 requests, Σ sk 32785; H_Q 32, H_KV 8, d 128.
  std::optional<StepAnnotation> sglang = ParseStepAnnotation(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)");
  ASSERT_TRUE(sglang);
  // 32·256·2·32785 = 537149440; 32·40·256·2 = 655360 + 32753·8·256·2 = 134156288.
  ExpectCost(CostIn("sglang_profiler::attention_paged_attention_ragged",
                    "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], "
                    "[835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
                    R"(["c10::BFloat16", "unsigned char", "c10::BFloat16", "c10::BFloat16", )"
                    R"("c10::BFloat16", "int", "int", "int", "", "float", "float", ""])",
                    &*sglang),
             537149440, 134811648);
}

TEST(PagedAttention, SaysWhyWithoutTheSums) {
  const OpCost none = CostIn("vllm::unified_attention_with_output", kVllmDims, kVllmTypes, nullptr);
  EXPECT_FALSE(none.flops.has_value());
  EXPECT_FALSE(none.bytes.has_value());
  EXPECT_EQ(none.family, "attention");
  EXPECT_NE(none.missing.find("no serving step annotation encloses it"), std::string::npos)
      << none.missing;
  // vLLM's own annotation has request and token counts, not the sums.
  std::optional<StepAnnotation> plain = ParseStepAnnotation("execute_context_1(3)_generation_1(1)");
  ASSERT_TRUE(plain);
  const OpCost c = CostIn("vllm::unified_attention_with_output", kVllmDims, kVllmTypes, &*plain);
  EXPECT_FALSE(c.flops.has_value());
  EXPECT_NE(c.missing.find("does not carry the per-request sums"), std::string::npos) << c.missing;
  // A step that runs no tokens.
  std::optional<StepAnnotation> idle = ParseStepAnnotation(
      "execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)");
  ASSERT_TRUE(idle);
  EXPECT_NE(CostIn("vllm::unified_attention", "[[4, 8, 64], [4, 2, 64], [4, 2, 64], []]",
                   R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", ""])", &*idle)
                .missing.find("runs no query tokens"),
            std::string::npos);
}

TEST(FusedMoe, NamesWhatIsRecordedAndWhatIsNot) {
  auto args = ParseOpArgs("[[32, 3072], [32, 32], [], []]",
                          R"(["c10::BFloat16", "c10::BFloat16", "", ""])", "", "");
  ASSERT_TRUE(args.ok());
  CostContext context;
  context.moe_top_k = 4;
  const OpCost c = OpCostFor("vllm::moe_forward", *args, context);
  EXPECT_EQ(c.family, "moe");
  EXPECT_FALSE(c.flops.has_value());
  EXPECT_FALSE(c.bytes.has_value());
  EXPECT_NE(c.missing.find("intermediate size"), std::string::npos) << c.missing;
  EXPECT_NE(c.missing.find("32 tokens, hidden size 3072, 32 experts, top-k 4"), std::string::npos)
      << c.missing;
  context.moe_top_k.reset();
  EXPECT_NE(OpCostFor("vllm::moe_forward", *args, context)
                .missing.find("the expert weights, and so the intermediate size, and the top-k "
                              "(no TopK) are not recorded"),
            std::string::npos);
  // Inductor's pad that feeds the MoE is not an MoE: a pointwise kernel.
  EXPECT_EQ(OpCostFor("triton_poi_fused_constant_pad_nd_moe_forward_0", {}, context).family,
            "elementwise");
}

OpArg Weight(std::vector<int64_t> dims, std::string type) {
  OpArg a;
  a.dims = std::move(dims);
  a.type = std::move(type);
  return a;
}

TEST(FusedMoe, FromTheNestedTopKAndWeights) {
  // M 2 tokens, H 4, E 2 experts, k 1; bf16 weights w13 [E, 2I, H], w2 [E, H, I] with I 4.
  auto args = ParseOpArgs("[[2, 4], [2, 2], [], []]",
                          R"(["c10::BFloat16", "c10::BFloat16", "", ""])", "", "");
  ASSERT_TRUE(args.ok());
  CostContext context;
  context.moe_top_k = 1;
  context.moe_weights = {Weight({2, 8, 4}, "c10::BFloat16"), Weight({2, 4, 4}, "c10::BFloat16")};
  const OpCost c = OpCostFor("vllm::moe_forward", *args, context);
  // Gated (N_up 8 = 2·I): 2·2·1·4·4·2 + 2·2·1·4·4 = 128 + 64 = 192 FLOPs.
  // Bytes: hidden in + out 2·2·4·2 = 32, intermediate out + in 2·2·1·4·2 = 32; E_active =
  // 2·(1 − (1/2)²) = 1.5 experts × (8·4·2 + 4·4·2 = 96) weight bytes = 144: 208.
  ExpectCost(c, 192, 208);
  EXPECT_EQ(c.family, "moe");
  EXPECT_TRUE(c.matrix);
}

TEST(FusedMoe, PackedWeightsAsTraceLensAtItsIntermediateSize) {
  // vLLM gpt-oss: M 32, H 3072 (padded), E 32, k 4; mxfp4 weights stored two per byte.
  auto args = ParseOpArgs("[[32, 3072], [32, 32], [], []]",
                          R"(["c10::BFloat16", "c10::BFloat16", "", ""])", "", "");
  ASSERT_TRUE(args.ok());
  CostContext context;
  context.moe_top_k = 4;
  // TraceLens takes I = H (its "LIMITATION"): with weights of that size the figures are its
  // pseudo_op::moe_triton_unfused_up + _down, 4.831838208 + 2.415919104 GFLOPs and
  // 284.9228269331473 + 142.93016346657365 MiB (reference/tracelens_inference/vllm_decode_full).
  context.moe_weights = {Weight({32, 1536, 6144}, "unsigned char"),
                         Weight({32, 1536, 3072}, "unsigned char")};
  const OpCost tl = OpCostFor("vllm::moe_forward", *args, context);
  ASSERT_TRUE(tl.flops && tl.bytes) << tl.missing;
  EXPECT_NEAR(*tl.flops, 7.247757312e9, 1);
  EXPECT_NEAR(*tl.bytes, (284.9228269331473 + 142.93016346657365) * 1048576, 1e-6 * *tl.bytes);
  // The capture's own weight views: [32, 1536, 5888] (K 3072/2, N 2·2944) and
  // [32, 1472, 3072] (K 2944/2, N 3072), so I = 2944: 6·32·4·3072·2944 = 6945767424 FLOPs.
  context.moe_weights = {Weight({32, 1536, 5888}, "unsigned char"),
                         Weight({32, 1472, 3072}, "unsigned char")};
  const OpCost c = OpCostFor("vllm::moe_forward", *args, context);
  ASSERT_TRUE(c.flops && c.bytes) << c.missing;
  EXPECT_DOUBLE_EQ(*c.flops, 6945767424.0);
  // 2·32·3072·2 + 2·32·4·2944·2 = 1900544, E_active 32·(1 − (28/32)^32) × (1536·5888 +
  // 1472·3072) = 13565952 weight bytes per expert.
  const double active = 32 * (1 - std::pow(28.0 / 32, 32));
  EXPECT_NEAR(*c.bytes, 1900544 + active * 13565952, 1e-9 * *c.bytes);
  EXPECT_NE(c.formula.find("I 2944"), std::string::npos) << c.formula;
  // Weights that fit no hidden size of 3072 are not used.
  context.moe_weights = {Weight({32, 1000, 5888}, "unsigned char"),
                         Weight({32, 1472, 3072}, "unsigned char")};
  EXPECT_NE(OpCostFor("vllm::moe_forward", *args, context).missing.find("do not fit"),
            std::string::npos);
}

TEST(FusedServingOps, AiterNormsRopeAndKvStore) {
  // aiter::rmsnorm2d_fwd_with_add_ck(out, in, res_in, res_out, w [2880]) on [32, 2880]:
  // N = 92160, rows 32: N + rows·(2C+2) + 2N = 92160 + 184384 + 184320 = 460864 FLOPs;
  // (4N + C)·2 = 743040 bytes.
  const char* add_dims = "[[32, 2880], [32, 2880], [32, 2880], [32, 2880], [2880], [], []]";
  const char* add_types = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", )"
                          R"("c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])";
  ExpectCost(CostIn("aiter::rmsnorm2d_fwd_with_add_ck", add_dims, add_types, nullptr), 460864,
             743040);
  // aiter::rms_norm(in [32, 2880], w): rows·(2C+2) + 2N = 184384 + 184320 = 368704;
  // (2N + C)·2 = 374400.
  ExpectCost(CostIn("aiter::rms_norm", "[[32, 2880], [2880], [], []]",
                    R"(["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])", nullptr),
             368704, 374400);
  // aiter::rmsnorm(out, in [256, 128], w [128]): 256·258 + 2·32768 = 131584; (65536+128)·2.
  ExpectCost(CostIn("aiter::rmsnorm", "[[256, 128], [256, 128], [128], []]",
                    R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"])", nullptr),
             131584, 131328);
  // sgl_kernel::rotary_embedding(pos [32], q [32, 4096], k [32, 1024], 128, cache [.., 128]):
  // 3·(131072 + 32768) = 491520 FLOPs; q,k read+written 655360 + positions 256 + cache rows
  // 32·128·2 = 8192: 663808 bytes.
  ExpectCost(CostIn("sgl_kernel::rotary_embedding", "[[32], [32, 4096], [32, 1024], [], [41216, 128], []]",
                    R"(["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"])",
                    nullptr, R"(["", "", "", "128", "", "True"])"),
             491520, 663808);
  // sglang::store_cache(k [32, 1024], v, k_cache, v_cache, indices [32] int64): k + v + indices
  // read 131072 + 256, written into the bf16 cache 131072: 262400 bytes, no FLOPs.
  ExpectCost(CostIn("sglang::store_cache",
                    "[[32, 1024], [32, 1024], [835874, 1024], [835874, 1024], [32], [], []]",
                    R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", )"
                    R"("long int", "Scalar", "Scalar"])",
                    nullptr),
             0, 262400);
}

// A trace with steps on thread 7 of process 1 and operators on it and on its replay thread.
class StepOfRangeTest : public ::testing::Test {
 protected:
  int32_t Add(const std::string& name, int64_t start, int64_t end, int64_t thread,
              int64_t process = 1, RangeKind kind = RangeKind::kUserAnnotation) {
    Range r;
    r.name = trace_.strings.Intern(name);
    r.start_ns = start;
    r.dur_ns = end - start;
    r.thread = thread;
    r.process = process;
    r.kind = kind;
    trace_.ranges.push_back(r);
    return static_cast<int32_t>(trace_.ranges.size() - 1);
  }
  Trace trace_;
};

TEST_F(StepOfRangeTest, InnermostStepWithSumsOnItsOwnOrItsLaunchingThread) {
  const int32_t profiler = Add("ProfilerStep#3", 0, 1000, 7);
  const int32_t detailed = Add(kMixedStep, 10, 990, 7);
  Add("step[DECODE bs=2]", 20, 980, 7);  // nested deeper, but without the sums
  const int32_t next = Add("execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_1(sq1sk5sqsq1sqsk5)",
                           1000, 2000, 7);
  const int32_t eager = Add("vllm::unified_attention_with_output", 100, 200, 7, 1, RangeKind::kCpuOp);
  const int32_t copy = Add("vllm::unified_attention_with_output", 500, 510, ReplayThread(7), 1,
                           RangeKind::kCpuOp);
  const int32_t later = Add("aten::mm", 1500, 1600, ReplayThread(7), 1, RangeKind::kCpuOp);
  const int32_t outside = Add("aten::mm", 2500, 2600, 7, 1, RangeKind::kCpuOp);
  const int32_t other_thread = Add("aten::mm", 100, 200, ReplayThread(8), 1, RangeKind::kCpuOp);
  const int32_t other_process = Add("aten::mm", 100, 200, 7, 2, RangeKind::kCpuOp);
  const int32_t straddles = Add("aten::mm", 985, 995, 7, 1, RangeKind::kCpuOp);
  StepOfRange steps(trace_);
  EXPECT_EQ(steps.step_count(), 4u);
  EXPECT_EQ(steps.StepRange(eager), detailed);
  EXPECT_EQ(steps.StepRange(copy), detailed);
  EXPECT_EQ(steps.StepRange(later), next);
  EXPECT_EQ(steps.StepRange(outside), -1);
  EXPECT_EQ(steps.StepRange(other_thread), -1);
  EXPECT_EQ(steps.StepRange(other_process), -1);
  EXPECT_EQ(steps.StepRange(straddles), profiler);  // only ProfilerStep#3 encloses it whole
  EXPECT_EQ(steps.StepRange(Add("aten::mm", 900, 1100, 7, 1, RangeKind::kCpuOp)), -1);
  // A step is not in its own step: the detailed one is in ProfilerStep#3 (no sums there).
  EXPECT_EQ(steps.StepRange(detailed), profiler);
  EXPECT_EQ(steps.StepRange(profiler), -1);
  ASSERT_NE(steps.StepFor(copy), nullptr);
  EXPECT_EQ(steps.StepFor(copy)->decode.kv_tokens, 20);
  EXPECT_EQ(steps.StepFor(outside), nullptr);
  EXPECT_EQ(steps.StepRange(-1), -1);
}

TEST_F(StepOfRangeTest, WithoutSumsTheInnermostStep) {
  Add("ProfilerStep#3", 0, 1000, 7);
  const int32_t plain = Add("step[DECODE bs=2]", 20, 980, 7);
  const int32_t op = Add("aten::mm", 100, 200, 7, 1, RangeKind::kCpuOp);
  StepOfRange steps(trace_);
  EXPECT_EQ(steps.StepRange(op), plain);
}

TEST_F(StepOfRangeTest, RangeContextsFindTheMoeTopK) {
  Add(kMixedStep, 0, 1000, 7);
  const int32_t moe = Add("vllm::moe_forward", 100, 400, ReplayThread(7), 1, RangeKind::kCpuOp);
  const int32_t top_k = Add("TopK", 110, 120, ReplayThread(7), 1, RangeKind::kCpuOp);
  trace_.ranges[top_k].input_dims = trace_.strings.Intern("[[32, 32], [], [], [], [], [], []]");
  trace_.ranges[top_k].input_types =
      trace_.strings.Intern(R"(["c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar", "", ""])");
  trace_.ranges[top_k].concrete_inputs =
      trace_.strings.Intern(R"(["", "4", "True", "1", "True", "", ""])");
  trace_.ranges[moe].input_dims = trace_.strings.Intern("[[32, 3072], [32, 32], [], []]");
  trace_.ranges[moe].input_types =
      trace_.strings.Intern(R"(["c10::BFloat16", "c10::BFloat16", "", ""])");
  // Nested views: an activation (first dim 1), the gate/up weight twice, the down weight.
  auto view = [&](int64_t start, const char* dims, const char* type) {
    const int32_t v = Add("aten::view", start, start + 5, ReplayThread(7), 1, RangeKind::kCpuOp);
    trace_.ranges[v].input_dims = trace_.strings.Intern(dims);
    trace_.ranges[v].input_types = trace_.strings.Intern(type);
  };
  view(130, "[[1, 128, 2944], []]", R"(["c10::BFloat16", "ScalarList"])");
  view(140, "[[32, 1536, 5888], []]", R"(["unsigned char", "ScalarList"])");
  view(150, "[[32, 1536, 5888], []]", R"(["unsigned char", "ScalarList"])");
  view(160, "[[32, 1472, 3072], []]", R"(["unsigned char", "ScalarList"])");
  view(170, "[[32, 9, 9], []]", R"(["unsigned char", "ScalarList"])");  // after the two
  const int32_t other_moe = Add("vllm::moe_forward", 500, 600, ReplayThread(7), 1, RangeKind::kCpuOp);
  RangeContexts contexts(trace_);
  const CostContext c = contexts.For(moe);
  EXPECT_EQ(c.moe_top_k, 4);
  ASSERT_NE(c.step, nullptr);
  EXPECT_EQ(c.step->verbatim, kMixedStep);
  ASSERT_EQ(c.moe_weights.size(), 2u);
  EXPECT_EQ(c.moe_weights[0].dims, (std::vector<int64_t>{32, 1536, 5888}));
  EXPECT_EQ(c.moe_weights[1].dims, (std::vector<int64_t>{32, 1472, 3072}));
  EXPECT_EQ(c.moe_weights[1].type, "unsigned char");
  const CostContext other = contexts.For(other_moe);
  EXPECT_FALSE(other.moe_top_k.has_value());  // its TopK is not inside it
  EXPECT_TRUE(other.moe_weights.empty());
}

// Two decode steps on thread 1, one attention instance in each: the group's figures are the
// sum of each instance costed from its own step.
TEST(ServingSheet, AttentionInstancesCostedFromTheirOwnSteps) {
  Trace t;
  auto range = [&](const std::string& name, int64_t start, int64_t end, RangeKind kind) {
    Range r;
    r.name = t.strings.Intern(name);
    r.start_ns = start;
    r.dur_ns = end - start;
    r.thread = 1;
    r.process = 100;
    r.kind = kind;
    r.input_dims = t.strings.Intern(kind == RangeKind::kCpuOp ? kVllmDims : "");
    r.input_types = t.strings.Intern(kind == RangeKind::kCpuOp ? kVllmTypes : "");
    t.ranges.push_back(r);
  };
  auto kernel = [&](int64_t launch_at, int64_t start, int64_t corr) {
    ApiCall a;
    a.name = t.strings.Intern("cudaLaunchKernel");
    a.start_ns = launch_at;
    a.dur_ns = 1'000;
    a.correlation = corr;
    a.thread = 1;
    a.process = 100;
    t.api_calls.push_back(a);
    GpuEvent g;
    g.name = t.strings.Intern("kernel_unified_attention_2d");
    g.start_ns = start;
    g.dur_ns = 10'000;
    g.stream = 7;
    g.correlation = corr;
    t.gpu_events.push_back(g);
  };
  range("execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk40sqsq4sqsk40)", 0, 50'000,
        RangeKind::kUserAnnotation);
  range("vllm::unified_attention_with_output", 1'000, 9'000, RangeKind::kCpuOp);
  kernel(2'000, 20'000, 1);
  range("execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk80sqsq4sqsk80)", 50'000, 100'000,
        RangeKind::kUserAnnotation);
  range("vllm::unified_attention_with_output", 51'000, 59'000, RangeKind::kCpuOp);
  kernel(52'000, 70'000, 2);
  const MappingResult mapping = MapGpuEvents(t);
  const MappingSheet sheet = BuildMappingSheet(t, mapping, {});
  ASSERT_EQ(sheet.groups.size(), 1u);
  const SheetGroup& g = sheet.groups[0];
  EXPECT_EQ(g.instances, 2);
  ASSERT_TRUE(g.cost.flops && g.cost.bytes) << g.cost.missing;
  // 8·128·2·40 + 8·128·2·80 = 81920 + 163840 = 245760. Bytes: 4·10·128·2 = 10240 per
  // instance, plus (40−4)·2·128·2 = 18432 and (80−4)·2·128·2 = 38912: 77824.
  EXPECT_DOUBLE_EQ(*g.cost.flops, 245760);
  EXPECT_DOUBLE_EQ(*g.cost.bytes, 77824);
  EXPECT_EQ(sheet.costed_ns, sheet.mapped_ns);
}


// Inductor pointwise kernels from the vLLM serving trace: N = xnumel (the last Scalar).
TEST(InductorCost, PointwiseKernelsAreCostedFromTheirElementCount) {
  // float → bf16 of 131072·64 = 8388608 elements: read 4 B and write 2 B each; a pure
  // conversion has no model FLOPs.
  OpCost copy = CostIn("triton_poi_fused__to_copy_1", "[[131072, 64], [131072, 64], []]",
                       R"(["float", "c10::BFloat16", "Scalar"])", nullptr, R"(["", "", "8388608"])");
  ExpectCost(copy, 8388608, 8388608.0 * 4 + 8388608.0 * 2);
  EXPECT_EQ(copy.model_flops, 0);
  EXPECT_EQ(copy.family, "elementwise");
  // A pad of [32, 2880] to [32, 3072]: 92160 elements read, 98304 written, 2 B each.
  OpCost pad = CostIn("triton_poi_fused_constant_pad_nd_moe_forward_0", "[[32, 2880], [32, 3072], []]",
                      R"(["c10::BFloat16", "c10::BFloat16", "Scalar"])", nullptr, R"(["", "", "98304"])");
  ExpectCost(pad, 98304, (92160 + 98304) * 2.0);
  EXPECT_EQ(pad.model_flops, 98304);
  // An embedding gather: 32 rows of a [201088, 2880] table are read, which Input Dims
  // cannot say.
  OpCost gather = CostIn("triton_poi_fused_embedding_2", "[[32], [201088, 2880], [32, 2880], []]",
                         R"(["int", "c10::BFloat16", "c10::BFloat16", "Scalar"])", nullptr,
                         R"(["", "", "", "92160"])");
  EXPECT_FALSE(gather.bytes.has_value());
  EXPECT_EQ(gather.missing, "triton_poi_fused_embedding_2: argument 1 [201088, 2880] is larger "
                            "than the kernel's 92160 elements: a gather, whose rows read are not "
                            "recorded");
  // Inductor specialised the count into the kernel: nothing recorded says it.
  OpCost fixed = CostIn("triton_poi_fused_0", "[[32], [201088, 2880], [32, 2880]]",
                        R"(["int", "c10::BFloat16", "c10::BFloat16"])", nullptr);
  EXPECT_FALSE(fixed.flops.has_value());
  EXPECT_EQ(fixed.missing, "triton_poi_fused_0: the kernel's element count (xnumel) is not "
                           "recorded (no Scalar argument)");
}

}  // namespace
}  // namespace opmap::analysis::serving_cost_test
