// FLOPs from shapes (docs/metrics.md "MFU") on hand-built Input Dims.
#include "analysis/mfu/op_flops.h"

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(InputDims, ParsesKinetoText) {
  auto a = ParseInputDims(" [[16, 128, 512], [512,512] , [], [[2, 3], [4]]] ");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 4u);
  EXPECT_EQ((*a)[0].dims, (std::vector<int64_t>{16, 128, 512}));
  EXPECT_EQ((*a)[1].dims, (std::vector<int64_t>{512, 512}));
  EXPECT_TRUE((*a)[2].dims.empty());
  EXPECT_TRUE((*a)[3].is_list);
  ASSERT_EQ((*a)[3].list.size(), 2u);
  EXPECT_EQ((*a)[3].list[1], (std::vector<int64_t>{4}));
  EXPECT_TRUE(ParseInputDims("[]")->empty());
  EXPECT_FALSE(ParseInputDims("[[1, 2]").ok());
  EXPECT_FALSE(ParseInputDims("[[1, x]]").ok());
  EXPECT_FALSE(ParseInputDims("[[1, 2]] junk").ok());
  EXPECT_FALSE(ParseInputDims("[3]").ok());
  EXPECT_FALSE(ParseInputDims("").ok());
}

double Flops(std::string_view op, std::string_view dims) {
  FlopsEstimate f = OpFlopsFromInputDims(op, dims);
  EXPECT_TRUE(f.flops.has_value()) << op << " " << dims << ": " << f.reason;
  return f.flops.value_or(-1);
}

TEST(OpFlops, Matmuls) {
  // mm [64,32]@[32,16]: 2·64·16·32 = 65536
  EXPECT_EQ(Flops("aten::mm", "[[64, 32], [32, 16]]"), 65536);
  // addmm bias, [141,512]@[512,2048]: 2·141·2048·512 + 141·2048 = 295,987,200
  EXPECT_EQ(Flops("aten::addmm", "[[2048], [141, 512], [512, 2048], [], []]"), 295987200);
  // bmm [8,64,32]@[8,32,16]: 8·65536 = 524288
  EXPECT_EQ(Flops("aten::bmm", "[[8, 64, 32], [8, 32, 16]]"), 524288);
  // baddbmm adds its bias per batch: + 8·64·16 = 8192
  EXPECT_EQ(Flops("aten::baddbmm", "[[8, 64, 16], [8, 64, 32], [8, 32, 16], [], []]"), 532480);
  // linear input [16,128,512], weight [256,512], bias [256]:
  // 2·(16·128)·256·512 + 16·128·256 = 536,870,912 + 524,288 = 537,395,200
  EXPECT_EQ(Flops("aten::linear", "[[16, 128, 512], [256, 512], [256]]"), 537395200);
  // matmul broadcast [4,1,64,32]@[3,32,16]: B = 4·3 = 12 → 12·65536 = 786432
  EXPECT_EQ(Flops("aten::matmul", "[[4, 1, 64, 32], [3, 32, 16]]"), 786432);
  // matmul [64,32]@[32] (matrix·vector): 2·64·1·32 = 4096
  EXPECT_EQ(Flops("aten::matmul", "[[64, 32], [32]]"), 4096);
  EXPECT_EQ(Flops("aten::matmul", "[[32], [32]]"), 64);
}

TEST(OpFlops, Attention) {
  // SDPA [B,H,S,D] = [2,8,128,64], k len 256: 4·2·8·128·256·64 = 134,217,728
  EXPECT_EQ(Flops("aten::scaled_dot_product_attention",
                  "[[2, 8, 128, 64], [2, 8, 256, 64], [2, 8, 256, 64], [], [], [], [], []]"),
            134217728);
  // _flash_attention_forward is [B,S,H,D]: same figure from [2,128,8,64] / [2,256,8,64].
  EXPECT_EQ(Flops("aten::_flash_attention_forward",
                  "[[2, 128, 8, 64], [2, 256, 8, 64], [2, 256, 8, 64], [], []]"),
            134217728);
  EXPECT_EQ(Flops("aten::_efficient_attention_forward",
                  "[[2, 128, 8, 64], [2, 256, 8, 64], [2, 256, 8, 64], [], []]"),
            134217728);
  FlopsEstimate f = OpFlopsFromInputDims("aten::scaled_dot_product_attention",
                                         "[[1, 1, 2, 2], [1, 1, 2, 2], [1, 1, 2, 2]]");
  EXPECT_NE(f.formula.find("(D_qk+D_v)"), std::string::npos) << f.formula;
  // Varlen flash (3-D q) has no sequence lengths in Input Dims.
  EXPECT_FALSE(OpFlopsFromInputDims("aten::_flash_attention_forward",
                                    "[[300, 8, 64], [300, 8, 64], [300, 8, 64]]")
                   .flops.has_value());
}

TEST(OpFlops, ConvNeedsConcreteInputs) {
  // From Input Dims alone the output size is not derivable (stride/padding are Concrete
  // Inputs); analysis/roofline's tests cover conv with them.
  FlopsEstimate g = OpFlopsFromInputDims("aten::convolution",
                                         "[[8, 64, 56, 56], [128, 32, 3, 3], [128], [], [], [], [], [], []]");
  EXPECT_FALSE(g.flops.has_value());
  EXPECT_NE(g.reason.find("Concrete Inputs"), std::string::npos) << g.reason;
}

TEST(OpFlops, UnavailableWithReason) {
  FlopsEstimate a = OpFlopsFromInputDims("aten::mm", "");
  EXPECT_FALSE(a.flops.has_value());
  EXPECT_NE(a.reason.find("no Input Dims recorded"), std::string::npos) << a.reason;
  FlopsEstimate b = OpFlopsFromInputDims("aten::mm", "[[64, 32], [31, 16]]");
  EXPECT_FALSE(b.flops.has_value());
  EXPECT_NE(b.reason.find("K mismatch"), std::string::npos);
  FlopsEstimate c = OpFlopsFromInputDims("aten::_local_scalar_dense", "[[1]]");
  EXPECT_FALSE(c.flops.has_value());
  EXPECT_EQ(c.reason, "no FLOPs/bytes formula for aten::_local_scalar_dense");
  EXPECT_FALSE(OpFlopsFromInputDims("aten::addmm", "[[1], [2, 3]]").flops.has_value());
  EXPECT_FALSE(OpFlopsFromInputDims("aten::linear", "[[4, 0], [3, 0]]").flops.has_value());
  EXPECT_FALSE(OpFlopsFromInputDims("aten::mm", "[[4, 3").flops.has_value());
}

}  // namespace
}  // namespace opmap::analysis
