// Built-in envelopes (METRICS.md Peaks table), GPU-name lookup, override text parsing.
#include "analysis/mfu/hardware_envelope.h"

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(HardwareEnvelope, LooksUpGpuNamesAsTracesSpellThem) {
  auto h100 = EnvelopeForGpuName("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->name, "H100 SXM5 80GB");
  EXPECT_EQ(h100->sm_count, 132);
  EXPECT_DOUBLE_EQ(h100->hbm_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(*h100->PeakFlopsPerS(Precision::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(*h100->PeakFlopsPerS(Precision::kFp16), 989.4e12);
  EXPECT_DOUBLE_EQ(*h100->PeakFlopsPerS(Precision::kFp8), 1978.9e12);
  EXPECT_DOUBLE_EQ(*h100->PeakFlopsPerS(Precision::kTf32), 494.7e12);
  EXPECT_DOUBLE_EQ(*h100->PeakFlopsPerS(Precision::kFp32), 66.9e12);
  EXPECT_DOUBLE_EQ(*h100->ridge_bf16_flop_per_byte, 295);
  EXPECT_NEAR(*h100->RidgeFlopPerByte(Precision::kBf16), 295, 1);  // 989.4/3.35 = 295.3

  auto h200 = EnvelopeForGpuName("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->name, "H200 SXM 141GB");
  EXPECT_DOUBLE_EQ(h200->hbm_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(*h200->PeakFlopsPerS(Precision::kFp32), 67e12);
  EXPECT_DOUBLE_EQ(*h200->ridge_bf16_flop_per_byte, 206);

  auto a100 = EnvelopeForGpuName("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(a100->name, "A100 SXM4 80GB");
  EXPECT_EQ(a100->sm_count, 108);
  EXPECT_DOUBLE_EQ(a100->hbm_bytes_per_s, 2.039e12);
  EXPECT_DOUBLE_EQ(*a100->PeakFlopsPerS(Precision::kBf16), 312e12);
  EXPECT_DOUBLE_EQ(*a100->PeakFlopsPerS(Precision::kTf32), 156e12);
  EXPECT_DOUBLE_EQ(*a100->PeakFlopsPerS(Precision::kFp32), 19.5e12);
  EXPECT_FALSE(a100->PeakFlopsPerS(Precision::kFp8).has_value());  // absent, never 0
  EXPECT_FALSE(a100->RidgeFlopPerByte(Precision::kFp8).has_value());

  EXPECT_TRUE(EnvelopeForGpuName("H100 SXM5 80GB").has_value());
  // Variants with other peaks are not guessed.
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA H100 PCIe").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA H100 NVL").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA GH200 480GB").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA A100-SXM4-40GB").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA GB200").has_value());  // 1,200 W part
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA B200")->name, "B200 HGX 180GB");
  EXPECT_FALSE(EnvelopeForGpuName("Tesla T4").has_value());
}

TEST(HardwareEnvelope, PrecisionFromKinetoInputType) {
  EXPECT_EQ(PrecisionFromInputType("c10::BFloat16"), Precision::kBf16);
  EXPECT_EQ(PrecisionFromInputType("c10::Half"), Precision::kFp16);
  EXPECT_EQ(PrecisionFromInputType("float"), Precision::kFp32);
  EXPECT_EQ(PrecisionFromInputType("c10::Float8_e4m3fn"), Precision::kFp8);
  EXPECT_FALSE(PrecisionFromInputType("Scalar").has_value());
  EXPECT_FALSE(PrecisionFromInputType("").has_value());
}

TEST(HardwareEnvelope, ParsesOverrideText) {
  auto e = ParseEnvelopeText(
      "# my GPU\n"
      "name = Test GPU\n"
      "sm_count = 100\n"
      "hbm_tb_per_s = 2.0   # TB/s\n"
      "\n"
      "bf16_tflops = 400\n"
      "fp32_tflops = 50\n");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name, "Test GPU");
  EXPECT_EQ(e->sm_count, 100);
  EXPECT_DOUBLE_EQ(e->hbm_bytes_per_s, 2e12);
  EXPECT_DOUBLE_EQ(*e->bf16_flops_per_s, 400e12);
  EXPECT_FALSE(e->fp8_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*e->ridge_bf16_flop_per_byte, 200);  // 400e12 / 2e12

  // A base with one figure overridden (the measured H200 matmul rate).
  auto m = ParseEnvelopeText("base = NVIDIA H200\nname = H200 measured\nbf16_tflops = 790\n"
                             "fp8_tflops = none\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->sm_count, 132);
  EXPECT_DOUBLE_EQ(*m->bf16_flops_per_s, 790e12);
  EXPECT_FALSE(m->fp8_flops_per_s.has_value());
  EXPECT_NEAR(*m->ridge_bf16_flop_per_byte, 790.0 / 4.8, 1e-9);
}

TEST(HardwareEnvelope, OverrideErrorsNameLineAndKey) {
  auto msg = [](std::string_view text) {
    auto e = ParseEnvelopeText(text);
    EXPECT_FALSE(e.ok());
    return std::string(e.status().message());
  };
  EXPECT_EQ(msg("name = x\nhbm_tb_per_s = 2\nbf16_tflops = 0\n"),
            "line 3: key 'bf16_tflops': expected dense TFLOP/s > 0, or `none` when the GPU has "
            "no such path");
  EXPECT_NE(msg("name = x\n\nsm_count = 1.5\n").find("line 3: key 'sm_count'"), std::string::npos);
  EXPECT_NE(msg("name = x\nhbm_tb_per_s = fast\n").find("line 2: key 'hbm_tb_per_s'"),
            std::string::npos);
  EXPECT_NE(msg("name = x\nfp64_tflops = 3\n").find("line 2: key 'fp64_tflops': unknown"),
            std::string::npos);
  EXPECT_NE(msg("name = x\nname = y\n").find("line 2: key 'name': repeated"), std::string::npos);
  EXPECT_NE(msg("name = x\njust text\n").find("line 2: expected `key = value`"),
            std::string::npos);
  EXPECT_NE(msg("base = Tesla T4\n").find("line 1: key 'base': no built-in"), std::string::npos);
  EXPECT_NE(msg("name = x\nbase = NVIDIA H200\n").find("line 2: key 'base'"), std::string::npos);
  EXPECT_EQ(msg("hbm_tb_per_s = 2\nbf16_tflops = 1\n"), "missing key 'name'");
  EXPECT_EQ(msg("name = x\nbf16_tflops = 1\n"), "missing key 'hbm_tb_per_s'");
  EXPECT_NE(msg("name = x\nhbm_tb_per_s = 2\n").find("no peak FLOP/s"), std::string::npos);
}

TEST(HardwareEnvelope, Utilization) {
  // 1e12 FLOPs in 1 s on a 1e12 FLOP/s peak = 1.
  EXPECT_DOUBLE_EQ(*Utilization(1e12, 1'000'000'000, 1e12), 1.0);
  EXPECT_FALSE(Utilization(1e12, 0, 1e12).has_value());
  EXPECT_FALSE(Utilization(1e12, 10, std::nullopt).has_value());
}

}  // namespace
}  // namespace opmap::analysis

namespace opmap::analysis {
namespace {

// The power limit the peaks hold at travels with the envelope into release reports.
TEST(HardwareEnvelope, PowerMode) {
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA H100 80GB HBM3")->power_mode, "700 W");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA B200")->power_mode, "1000 W");
  absl::StatusOr<HardwareEnvelope> e = ParseEnvelopeText("base = H100\npower_mode = 500 W cap\n");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->power_mode, "500 W cap");
  EXPECT_DOUBLE_EQ(*e->PeakFlopsPerS(Precision::kBf16), 989.4e12);
}

}  // namespace
}  // namespace opmap::analysis
