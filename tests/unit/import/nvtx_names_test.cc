#include "analysis/import/nvtx_names.h"

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(NvtxNames, ShapePayload) {
  NvtxName n = ParseNvtxName("demo::matmul{flops=2097152,bytes=196608}");
  EXPECT_EQ(n.name, "demo::matmul");
  EXPECT_EQ(n.flops, 2097152);
  EXPECT_EQ(n.bytes, 196608);
}

TEST(NvtxNames, PayloadKeysInAnyOrderAndUnknownKeysIgnored) {
  NvtxName n = ParseNvtxName("op{bytes=7,m=3,flops=9}");
  EXPECT_EQ(n.name, "op");
  EXPECT_EQ(n.flops, 9);
  EXPECT_EQ(n.bytes, 7);
  n = ParseNvtxName("op{flops=5}");
  EXPECT_EQ(n.flops, 5);
  EXPECT_EQ(n.bytes, -1);
}

TEST(NvtxNames, MalformedSuffixStaysInTheName) {
  for (const char* text : {"f{x}", "f{flops=}", "f{flops=1a}", "f{=3}", "{flops=1}", "f{}",
                           "f{flops=99999999999999999999}"}) {
    NvtxName n = ParseNvtxName(text);
    EXPECT_EQ(n.name, text) << text;
    EXPECT_EQ(n.flops, -1) << text;
    EXPECT_EQ(n.bytes, -1) << text;
  }
}

TEST(NvtxNames, EmitNvtxDecorationsStripped) {
  EXPECT_EQ(ParseNvtxName("aten::linear, seq = 3, op_id = 7").name, "aten::linear");
  EXPECT_EQ(ParseNvtxName("aten::addmm, op_id = 12, sizes = [[8, 64], [64, 64]]").name,
            "aten::addmm");
  EXPECT_EQ(ParseNvtxName("aten::mul, stashed seq = 4").name, "aten::mul");
  EXPECT_EQ(ParseNvtxName("decoder_layer.3").name, "decoder_layer.3");
  EXPECT_EQ(ParseNvtxName("").name, "");
}


TEST(NvtxNames, EmitNvtxFieldsAreRead) {
  NvtxName n = ParseNvtxName(
      "aten::addmm, seq = 12, op_id = 40, sizes = [[768], [8, 768], [768, 768], [], []], "
      "input_op_ids = [(38, 0), (39, 0)]");
  EXPECT_EQ(n.form, NvtxForm::kEmitNvtx);
  EXPECT_EQ(n.name, "aten::addmm");
  EXPECT_EQ(n.seq, 12);
  EXPECT_EQ(n.op_id, 40);
  EXPECT_EQ(n.input_dims, "[[768], [8, 768], [768, 768], [], []]");
  EXPECT_EQ(n.input_op_ids, "[(38, 0), (39, 0)]");
  // Backward: the stashed sequence number.
  n = ParseNvtxName("AddmmBackward0, stashed seq = 12, op_id = 77");
  EXPECT_EQ(n.name, "AddmmBackward0");
  EXPECT_EQ(n.seq, 12);
  EXPECT_EQ(n.op_id, 77);
  EXPECT_EQ(n.input_dims, "");
  // A list cut short (the ring's name bound) is not guessed at.
  n = ParseNvtxName("aten::cat, seq = 1, op_id = 2, sizes = [[8, 7], [8");
  EXPECT_EQ(n.name, "aten::cat");
  EXPECT_EQ(n.op_id, 2);
  EXPECT_EQ(n.input_dims, "");
}

TEST(NvtxNames, LayerwiseDictsNameTheirModule) {
  // vLLM's and SGLang's hooks: str() of a dict.
  NvtxName n = ParseNvtxName(
      "{'Module': 'top.model.layers.0.mlp.down_proj', 'TrainableParams': {'weight': [1024, "
      "3072]}, 'Inputs': [[8, 3072]], 'StaticParams': {'in_features': 3072, 'out_features': "
      "1024}}");
  EXPECT_EQ(n.form, NvtxForm::kLayerwise);
  EXPECT_EQ(n.name, "top.model.layers.0.mlp.down_proj");
  EXPECT_EQ(n.input_dims, "[[8, 3072]]");
  EXPECT_FALSE(n.output_marker);
  // The top module takes its tensors as keyword arguments: no Inputs.
  n = ParseNvtxName("{'Module': 'top', 'input_ids': [[8]], 'positions': [[8]]}");
  EXPECT_EQ(n.name, "top");
  EXPECT_EQ(n.input_dims, "");
  // vLLM's output marker, pushed and popped after the forward.
  n = ParseNvtxName("{'Module': 'top.model.norm', 'TrainableParams': {'weight': [1024]}, "
                    "'Outputs': [[8, 1024]]}");
  EXPECT_EQ(n.name, "top.model.norm");
  EXPECT_TRUE(n.output_marker);
  // Cut short inside TrainableParams: the module is still named.
  n = ParseNvtxName("{'Module': 'top.lm_head', 'TrainableParams': {'weight': [151936, 10");
  EXPECT_EQ(n.name, "top.lm_head");
  EXPECT_EQ(n.input_dims, "");
  // vLLM's torch.compile wrapper: the compiled module by class; its output marker dropped.
  n = ParseNvtxName("{'Module': 'Torch Compiled Module (input):LlamaForCausalLM', "
                    "'Inputs': [[8], [8]]}");
  EXPECT_EQ(n.name, "LlamaForCausalLM");
  EXPECT_EQ(n.input_dims, "[[8], [8]]");
  EXPECT_TRUE(ParseNvtxName("{'Module': 'Torch Compiled Module (output):LlamaForCausalLM', "
                            "'Outputs': [[8, 4096]]}")
                  .output_marker);
  // Not a layerwise dict.
  EXPECT_EQ(ParseNvtxName("{'Module': ''}").form, NvtxForm::kPlain);
}

TEST(NvtxNames, OpmapTorchModules) {
  NvtxName n = ParseNvtxName("opmap.module encoder.layer.3.attention (BertAttention) "
                             "shapes=[[4, 16, 384]]");
  EXPECT_EQ(n.form, NvtxForm::kOpmapModule);
  EXPECT_EQ(n.name, "encoder.layer.3.attention (BertAttention)");
  EXPECT_EQ(n.input_dims, "[[4, 16, 384]]");
  n = ParseNvtxName("opmap.module BertModel (BertModel)");
  EXPECT_EQ(n.name, "BertModel (BertModel)");
  EXPECT_EQ(n.input_dims, "");
}

TEST(NvtxNames, NamingARangeDropsOutputMarkers) {
  StringTable strings;
  Range r;
  ASSERT_TRUE(NameNvtxRange("aten::mm, seq = 1, op_id = 2, sizes = [[8, 4], [4, 2]]", strings, r));
  EXPECT_EQ(strings.Get(r.name), "aten::mm");
  EXPECT_EQ(strings.Get(r.input_dims), "[[8, 4], [4, 2]]");
  EXPECT_FALSE(NameNvtxRange("{'Module': 'top.x', 'Outputs': [[1]]}", strings, r));
}

}  // namespace
}  // namespace opmap::analysis
