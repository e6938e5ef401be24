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

}  // namespace
}  // namespace opmap::analysis
