#include "analysis/import/nvtx_names.h"

#include <string>
#include <vector>

#include "common/text/text_util.h"
#include "analysis/roofline/op_args.h"
#include "analysis/serving/request_key.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

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


// Every name a real PyTorch run pushed (tests/framework/nvtx_strings.py: torch 2.15.0,
// emit_nvtx with and without shapes, forward and backward, all-MiniLM-L6-v2, and
// opmap_torch's module, step and request ranges), captured by libopmap_inject.
TEST(NvtxNames, RealTorchRunNamesParse) {
  const std::string text = ::opmap::testing::ReadFileOrDie(
      std::string(OPMAP_FRAMEWORK_DATA) + "/nvtx_strings_torch2.15.0.txt");
  int emit = 0, with_sizes = 0, modules = 0, steps = 0;
  for (std::string_view line : text::Lines(text)) {
    if (line.empty() || line.starts_with("#")) continue;
    const NvtxName n = ParseNvtxName(line);
    SCOPED_TRACE(std::string(line));
    if (line.starts_with("opmap.module ")) {
      ++modules;
      EXPECT_EQ(n.form, NvtxForm::kOpmapModule);
      EXPECT_TRUE(n.name.ends_with(")")) << n.name;
      EXPECT_EQ(line.find(" shapes=") != std::string_view::npos, !n.input_dims.empty());
    } else if (line.find(", op_id = ") != std::string_view::npos) {
      ++emit;
      EXPECT_EQ(n.form, NvtxForm::kEmitNvtx);
      EXPECT_EQ(n.name.find(", "), std::string_view::npos) << n.name;
      EXPECT_GT(n.op_id, 0);
      EXPECT_EQ(line.find(", seq = ") != std::string_view::npos, n.seq >= 0);
      if (line.find(", sizes = ") != std::string_view::npos) {
        ++with_sizes;
        // The shapes read as a Kineto trace's Input Dims, one per recorded input.
        absl::StatusOr<std::vector<OpArg>> args = ParseOpArgs(n.input_dims, "", "", "");
        ASSERT_TRUE(args.ok()) << args.status();
        EXPECT_FALSE(args->empty());
        EXPECT_TRUE(n.input_op_ids.starts_with("[(")) << n.input_op_ids;
      }
    } else if (line.starts_with("step[") || line == "request" || line == "iteration") {
      ++steps;
      EXPECT_EQ(n.form, NvtxForm::kPlain);
      EXPECT_FALSE(RequestKey(n.name).empty()) << "a request or step subject";
    }
  }
  EXPECT_GE(emit, 30);
  EXPECT_GE(with_sizes, 20);
  EXPECT_GE(modules, 30);
  EXPECT_GE(steps, 4);
}

// Every distinct name vLLM's and SGLang's own layerwise hooks pushed on a Llama decoder
// and a BertModel (tests/framework/layerwise_strings.py: their PytHooks at the commits the
// file names), captured by libopmap_inject.
TEST(NvtxNames, RealLayerwiseHookNamesParse) {
  const std::string text = ::opmap::testing::ReadFileOrDie(
      std::string(OPMAP_FRAMEWORK_DATA) + "/nvtx_strings_layerwise.txt");
  int names = 0, outputs = 0, with_inputs = 0;
  for (std::string_view line : text::Lines(text)) {
    if (line.empty() || line.starts_with("#")) continue;
    ++names;
    SCOPED_TRACE(std::string(line));
    const NvtxName n = ParseNvtxName(line);
    EXPECT_EQ(n.form, NvtxForm::kLayerwise);
    // The module path, exactly as the dict holds it.
    const size_t at = line.find("'Module': '") + 11;
    EXPECT_EQ(n.name, line.substr(at, line.find('\'', at) - at));
    EXPECT_TRUE(n.name.starts_with("top")) << n.name;
    const bool has_outputs = line.find("'Outputs': ") != std::string_view::npos;
    const size_t inputs = line.find("'Inputs': ");
    EXPECT_EQ(n.output_marker, has_outputs);
    if (inputs != std::string_view::npos) {
      ++with_inputs;
      // The Inputs list as written, which reads as Input Dims.
      EXPECT_TRUE(line.substr(inputs + 10).starts_with(n.input_dims)) << n.input_dims;
      absl::StatusOr<std::vector<OpArg>> args = ParseOpArgs(n.input_dims, "", "", "");
      ASSERT_TRUE(args.ok()) << args.status();
      EXPECT_FALSE(args->empty());
    } else {
      EXPECT_EQ(n.input_dims, "");
    }
    outputs += has_outputs ? 1 : 0;
  }
  EXPECT_GE(names, 100);
  EXPECT_GE(outputs, 30) << "vLLM's output markers";
  EXPECT_GE(with_inputs, 60);
}

}  // namespace
}  // namespace opmap::analysis
