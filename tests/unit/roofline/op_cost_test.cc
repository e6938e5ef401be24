// FLOPs and compulsory bytes per operator instance (docs/metrics.md), each family's formula
// checked on a shape worked by hand in the comment beside it.
#include "analysis/roofline/op_cost.h"

#include "analysis/roofline/op_args.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

OpCost Cost(std::string_view op, std::string_view dims, std::string_view types,
            std::string_view concrete = "", std::optional<int> hint = std::nullopt) {
  return OpCostFromText(op, dims, types, concrete, "", hint);
}

void ExpectCost(const OpCost& c, double flops, double bytes) {
  ASSERT_TRUE(c.flops.has_value()) << c.missing;
  ASSERT_TRUE(c.bytes.has_value()) << c.missing;
  EXPECT_DOUBLE_EQ(*c.flops, flops) << c.formula;
  EXPECT_DOUBLE_EQ(*c.bytes, bytes) << c.bytes_formula;
}

TEST(OpArgs, ZipsTheFourFields) {
  auto a = ParseOpArgs("[[2, 3], [], [[1, 2], [3]]]", R"(["c10::BFloat16", "Scalar", "TensorList"])",
                       R"(["", "[1, 1]", ""])", "[[3, 1], [], []]");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_TRUE((*a)[0].IsTensor());
  EXPECT_EQ((*a)[0].Numel(), 6);
  EXPECT_EQ((*a)[0].ElementBytes(), 2);
  EXPECT_EQ((*a)[0].strides, (std::vector<int64_t>{3, 1}));
  EXPECT_FALSE((*a)[1].IsTensor());
  EXPECT_EQ(*(*a)[1].ConcreteInts(), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE((*a)[2].is_list);
  // Mismatched lengths name both fields' sizes.
  auto bad = ParseOpArgs("[[2], [3]]", R"(["float"])", "", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Input type has 1 arguments"), std::string::npos);
  EXPECT_FALSE(ParseStringArray(R"(["a", "b)", "Input type").ok());
  EXPECT_EQ(CompactArrayText("[\n  [\n    8,\n    12\n  ],\n  []\n]"), "[[8, 12], []]");
  EXPECT_EQ(CompactArrayText(R"([ "a b" ,"c\"d" ])"), R"(["a b", "c\"d"])");
  EXPECT_EQ(DtypeBytes("long int"), 8);
  EXPECT_EQ(DtypeBytes("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(DtypeBytes("Scalar"), std::nullopt);
}

TEST(OpCost, BatchedMatmulCountsEveryBatchsOutput) {
  // bmm [16,5185,64] @ [16,64,5185] bf16 (an attention score GEMM):
  //   FLOPs 2·16·5185·5185·64 = 55,058,892,800
  //   bytes (16·5185·64 + 16·64·5185 + 16·5185·5185)·2 = (5,309,440·2 + 430,144,400)·2
  //         = 881,532,960 → intensity 62.46 FLOP/B (memory-bound on an H100: ridge 295)
  const OpCost c = Cost("aten::bmm", "[[16, 5185, 64], [16, 64, 5185]]",
                        R"(["c10::BFloat16", "c10::BFloat16"])");
  ExpectCost(c, 55058892800.0, 881532960.0);
  EXPECT_NEAR(*c.flops / *c.bytes, 62.458, 1e-3);
  EXPECT_TRUE(c.matrix);
  EXPECT_EQ(c.family, "matmul");
}

TEST(OpCost, AddmmCountsItsBias) {
  // bias [512], [141,512] @ [512,512] bf16: 2·141·512·512 + 141·512 = 73,996,800 FLOPs;
  // bytes (512 + 72,192 + 262,144 + 72,192)·2 = 814,080 (TraceLens' figures).
  ExpectCost(Cost("aten::addmm", "[[512], [141, 512], [512, 512], [], []]",
                  R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])",
                  R"(["", "", "", "1", "1"])"),
             73996800.0, 814080.0);
}

TEST(OpCost, CausalAttentionHasExecutedAndModelFlops) {
  // flash SDPA q,k,v [16,16,559,64] bf16, is_causal (Concrete Inputs[4]) True:
  //   model 2·B·H·Sq·Sk·(64+64) = 2·256·559·559·128 = 20,478,754,816
  //   executed ½ = 10,239,377,408; bytes 4 · 16·16·559·64 · 2 = 73,269,248
  const OpCost c = Cost(
      "aten::_scaled_dot_product_flash_attention",
      "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], []]",
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"])",
      R"(["", "", "", "0.", "True", "False", "0.125"])");
  ExpectCost(c, 10239377408.0, 73269248.0);
  EXPECT_DOUBLE_EQ(*c.model_flops, 20478754816.0);
  // The same shapes not causal: executed = model.
  const OpCost full = Cost(
      "aten::_scaled_dot_product_flash_attention",
      "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], []]",
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"])",
      R"(["", "", "", "0.", "False", "False", "0.125"])");
  EXPECT_DOUBLE_EQ(*full.flops, 20478754816.0);
  // vLLM's paged attention records no KV lengths; outside a serving step (no CostContext)
  // it is unavailable, with the reason (serving_cost_test.cc costs it from its step).
  const OpCost paged = Cost("vllm::unified_attention_with_output",
                            "[[888, 8, 64], [888, 1, 64], [888, 1, 64], [888, 8, 64], [], [], []]",
                            R"(["c10::Float8_e4m3fn", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", ""])");
  EXPECT_FALSE(paged.flops.has_value());
  EXPECT_NE(paged.missing.find("KV lengths"), std::string::npos);
}

TEST(OpCost, ConvFromConcreteInputs) {
  // aten::convolution input [8,64,56,56], weight [128,32,3,3] (groups 2: Cin/groups 32),
  // bias [128], stride [2,2], padding [1,1], dilation [2,2], not transposed, bf16.
  //   out = ⌊(56 + 2·1 − 2·(3−1) − 1)/2⌋ + 1 = ⌊53/2⌋ + 1 = 27
  //   FLOPs 2·8·128·32·(27·27)·9 + bias 8·128·729 = 429,981,696 + 746,496 = 430,728,192
  //   bytes (8·64·56·56 + 128·32·9 + 128 + 8·128·729)·2 = (1,605,632 + 36,864 + 128 + 746,496)·2
  //         = 4,778,240
  ExpectCost(Cost("aten::convolution",
                  "[[8, 64, 56, 56], [128, 32, 3, 3], [128], [], [], [], [], [], []]",
                  R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"])",
                  R"(["", "", "", "[2, 2]", "[1, 1]", "[2, 2]", "False", "[0, 0]", "2"])"),
             430728192.0, 4778240.0);
  // conv2d(input, weight, bias, stride, padding, dilation, groups) with padding 'same'.
  const OpCost same = Cost("aten::conv2d", "[[1, 4, 10, 10], [8, 4, 3, 3], [], [], [], [], []]",
                           R"(["float", "float", "", "ScalarList", "", "ScalarList", "Scalar"])",
                           R"(["", "", "", "[1, 1]", "same", "[1, 1]", "1"])");
  // out 10x10: 2·1·8·4·100·9 = 57,600 FLOPs; bytes (400 + 288 + 800)·4 = 5,952
  ExpectCost(same, 57600.0, 5952.0);
  // Transposed: input [1,8,5,5], weight [8,4,2,2] (Cin, Cout/groups), stride 2 → out
  //   (5−1)·2 + (2−1) + 1 = 10; each input element meets every tap of the 4 output channels:
  //   FLOPs 2·N 1·Cin 8·(Cout/groups) 4·∏in 25·∏k 4 = 6,400; bytes (200 + 128 + 400)·4 = 2,912
  ExpectCost(Cost("aten::convolution", "[[1, 8, 5, 5], [8, 4, 2, 2], [], [], [], [], [], [], []]",
                  R"(["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"])",
                  R"(["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"])"),
             6400.0, 2912.0);
}

TEST(OpCost, ElementwiseBroadcastsAndCountsZeroDimTensors) {
  // mul [16,559,1024] × [16,559,1] fp32: out = broadcast [16,559,1024] = 9,158,656 elements
  //   bytes (9,158,656 + 8,944 + 9,158,656)·4 = 73,305,024
  ExpectCost(Cost("aten::mul", "[[16, 559, 1024], [16, 559, 1]]", R"(["float", "float"])"),
             9158656.0, 73305024.0);
  // add [16,559,1] fp32 + a 0-dim double tensor + alpha (a Python scalar: not read):
  //   bytes 8,944·4 + 1·8 + 8,944·4 = 71,560
  ExpectCost(Cost("aten::add", "[[16, 559, 1], [], []]", R"(["float", "double", "Scalar"])",
                  R"(["", "", "1"])"),
             8944.0, 71560.0);
  // A comparison writes bool: eq [4,8] int64 vs [8] int64 → 32·8 + 8·8 + 32·1 = 352 bytes
  ExpectCost(Cost("aten::eq", "[[4, 8], [8]]", R"(["long int", "long int"])"), 32.0, 352.0);
  // gelu is 8 FLOPs per element: [2,3] bf16 → 48 FLOPs, (6 + 6)·2 = 24 bytes
  ExpectCost(Cost("aten::gelu", "[[2, 3], []]", R"(["c10::BFloat16", ""])"), 48.0, 24.0);
  // In place: add_ writes self's shape.
  ExpectCost(Cost("aten::add_", "[[1, 141, 512], [1, 141, 512], []]",
                  R"(["c10::BFloat16", "c10::BFloat16", "Scalar"])"),
             72192.0, 433152.0);
}

TEST(OpCost, CopiesConvertDtypes) {
  // copy_(dst fp32 [16,559,1024], src bf16): 9,158,656·(4 + 2) = 54,951,936 bytes; one
  // instruction per element executed, no model FLOPs.
  const OpCost c = Cost("aten::copy_", "[[16, 559, 1024], [16, 559, 1024], []]",
                        R"(["float", "c10::BFloat16", "Scalar"])", R"(["", "", "False"])");
  ExpectCost(c, 9158656.0, 54951936.0);
  EXPECT_DOUBLE_EQ(*c.model_flops, 0);
  EXPECT_EQ(c.compute_dtype, "float");
  // _to_copy(self fp32 [1,128,3,224,224], dtype 15 = bf16): 19,267,584·(4 + 2) bytes
  ExpectCost(Cost("aten::_to_copy", "[[1, 128, 3, 224, 224], [], [], [], [], [], []]",
                  R"(["float", "Scalar", "", "", "", "Scalar", ""])",
                  R"(["", "15", "", "", "", "False", ""])"),
             19267584.0, 115605504.0);
  // fill_ only writes: [888] int64 → 7,104 bytes, 0 FLOPs
  ExpectCost(Cost("aten::fill_", "[[888], []]", R"(["long int", "Scalar"])", R"(["", "-1"])"), 0,
             7104.0);
}

TEST(OpCost, CatAlongADim) {
  // cat([[128,1,768], [128,196,768]], dim 1): Kineto writes TensorList without a dtype, so
  // the element size comes from the kernel (CatArrayBatchedCopy<OpaqueType<2>>).
  //   read 128·768·(1 + 196) = 19,365,888 elements, write the same → 2·19,365,888·2 bytes
  const OpCost c = Cost("aten::cat", "[[[128, 1, 768], [128, 196, 768]], []]",
                        R"(["TensorList", "Scalar"])", R"(["", "1"])", 2);
  ExpectCost(c, 0, 77463552.0);
  EXPECT_EQ(ElementBytesFromKernelName("void at::native::(anonymous namespace)::CatArrayBatchedCopy"
                                       "<at::native::(anonymous namespace)::OpaqueType<2>, unsigned int, 3, 64, 64>"),
            2);
  const OpCost untyped = Cost("aten::cat", "[[[2, 3], [2, 3]], []]", R"(["TensorList", "Scalar"])",
                              R"(["", "0"])");
  EXPECT_FALSE(untyped.bytes.has_value());
  EXPECT_NE(untyped.missing.find("dtype"), std::string::npos);
}

TEST(OpCost, NormsSoftmaxReductions) {
  // layer_norm [1,141,512] bf16, normalized [512]: FLOPs 5·72,192 + 6·512 = 364,032,
  // bytes (2·72,192 + 6·512)·2 = 294,912 (TraceLens' counts).
  ExpectCost(Cost("aten::layer_norm", "[[1, 141, 512], [], [512], [512], [], []]",
                  R"(["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])",
                  R"(["", "[512]", "", "", "9.9999999999999998e-13", "True"])"),
             364032.0, 294912.0);
  // _softmax [3136,12,8,8] bf16 (2,408,448 elements): 5/element; bytes in + out
  ExpectCost(Cost("aten::_softmax", "[[3136, 12, 8, 8], [], []]",
                  R"(["c10::BFloat16", "Scalar", "Scalar"])", R"(["", "-1", "False"])"),
             12042240.0, 9633792.0);
  // mean [16,559,1024] fp32 over dim [-1], keepdim: reads 9,158,656, writes 8,944 elements
  ExpectCost(Cost("aten::mean", "[[16, 559, 1024], [], [], []]",
                  R"(["float", "ScalarList", "Scalar", ""])", R"(["", "[-1]", "True", ""])"),
             9158656.0, 36670400.0);
  // rms_norm [888,2880] bf16 with weight [2880]: rows 888·(2·2880 + 2) + 2·2,557,440 FLOPs;
  // bytes (2·2,557,440 + 2880)·2
  ExpectCost(Cost("_C::rms_norm", "[[888, 2880], [888, 2880], [2880], []]",
                  R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"])"),
             888.0 * 5762 + 2 * 2557440.0, (2 * 2557440.0 + 2880) * 2);
}

TEST(OpCost, GathersAndServingOps) {
  // index_select(weight [151936,1024] bf16, dim 0, index [8944] int64):
  //   rows 8,944·1,024·2 = 18,317,312 read and written + index 71,552 → 36,706,176
  ExpectCost(Cost("aten::index_select", "[[151936, 1024], [], [8944]]",
                  R"(["c10::BFloat16", "Scalar", "long int"])", R"(["", "0", ""])"),
             0, 36706176.0);
  ExpectCost(Cost("aten::embedding", "[[151936, 1024], [16, 559], [], [], []]",
                  R"(["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"])",
                  R"(["", "", "-1", "False", "False"])"),
             0, 36706176.0);
  // static fp8 quant (out fp8 [888,512], in bf16, scale fp32 0-dim): 2 FLOPs per element;
  //   bytes 454,656·2 + 454,656·1 + 4 = 1,363,972
  ExpectCost(Cost("_C::static_scaled_fp8_quant", "[[888, 512], [888, 512], []]",
                  R"(["c10::Float8_e4m3fn", "c10::BFloat16", "float"])"),
             909312.0, 1363972.0);
  // Fused MoE records no expert weights: unavailable with the reason.
  const OpCost moe = Cost("vllm::moe_forward", "[[888, 3072], [888, 128], []]",
                          R"(["c10::BFloat16", "c10::BFloat16", ""])");
  EXPECT_FALSE(moe.flops.has_value());
  EXPECT_NE(moe.missing.find("expert weights"), std::string::npos);
}

TEST(OpCost, ShapesWithoutDtypesGiveFlopsNotBytes) {
  const OpCost c = Cost("aten::mm", "[[64, 32], [32, 16]]", "");
  ASSERT_TRUE(c.flops.has_value());
  EXPECT_DOUBLE_EQ(*c.flops, 65536);
  EXPECT_FALSE(c.bytes.has_value());
  EXPECT_NE(c.missing.find("dtypes not recorded"), std::string::npos);
  EXPECT_NE(Cost("aten::frobnicate", "[[1]]", R"(["float"])").missing.find("no FLOPs/bytes formula"),
            std::string::npos);
}

}  // namespace
}  // namespace opmap::analysis
