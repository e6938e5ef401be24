// Built-in envelopes (docs/metrics.md Peaks table), GPU-name lookup, override text parsing.
#include "analysis/mfu/hardware_envelope.h"

#include <optional>
#include <string>
#include <string_view>

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
  // Variants with other peaks get their own rows, never the SXM part's.
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA H100 PCIe")->name, "H100 PCIe 80GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA H100 NVL")->name, "H100 NVL 94GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA GH200 480GB")->name, "GH200 96GB HBM3");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA GB200")->name, "GB200 186GB");  // 1,200 W part
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA B200")->name, "B200 HGX 180GB");
  // Variants with other peaks and no row of their own are not guessed.
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA A100-SXM4-40GB").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA A100 80GB PCIe").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA H200 NVL").has_value());
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
  EXPECT_NE(msg("name = x\njust text\n").find("envelope:2: expected `key = value`"),
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

namespace opmap::analysis {
namespace {

// Looks `gpu` up and checks it resolved to `name` with these SMs, TB/s and BF16 TFLOP/s.
void ExpectEnvelope(std::string_view gpu, std::string_view name, int32_t sms, double tb_per_s,
                    double bf16_tflops) {
  SCOPED_TRACE(std::string(gpu));
  std::optional<HardwareEnvelope> e = EnvelopeForGpuName(gpu);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->name, name);
  EXPECT_EQ(e->sm_count, sms);
  EXPECT_DOUBLE_EQ(e->hbm_bytes_per_s, tb_per_s * 1e12);
  EXPECT_DOUBLE_EQ(*e->PeakFlopsPerS(Precision::kBf16), bf16_tflops * 1e12);
  EXPECT_FALSE(e->source.empty());
  EXPECT_FALSE(e->power_mode.empty());
  // New rows' ridge is bf16 / bandwidth.
  EXPECT_NEAR(*e->ridge_bf16_flop_per_byte, bf16_tflops / tb_per_s, 0.5);
}

TEST(HardwareEnvelope, InferenceAndAmdGpusAsTracesSpellThem) {
  ExpectEnvelope("NVIDIA H100 PCIe", "H100 PCIe 80GB", 114, 2.0, 756);
  ExpectEnvelope("NVIDIA H100 NVL", "H100 NVL 94GB", 132, 3.9, 835.5);
  ExpectEnvelope("NVIDIA GH200 480GB", "GH200 96GB HBM3", 132, 4.0, 989.4);
  ExpectEnvelope("NVIDIA GH200 144G HBM3e", "GH200 144GB HBM3e", 132, 4.9, 989.4);
  ExpectEnvelope("NVIDIA GH200 624GB", "GH200 144GB HBM3e", 132, 4.9, 989.4);
  ExpectEnvelope("NVIDIA H20", "H20 96GB", 78, 4.0, 148);
  ExpectEnvelope("NVIDIA L4", "L4 24GB", 58, 0.3, 121);
  ExpectEnvelope("NVIDIA L40S", "L40S 48GB", 142, 0.864, 362.05);
  ExpectEnvelope("NVIDIA A10", "A10 24GB", 72, 0.6, 125);
  ExpectEnvelope("NVIDIA A10G", "A10G 24GB", 80, 0.6, 125);
  ExpectEnvelope("NVIDIA GB200", "GB200 186GB", 148, 8.0, 2500);
  ExpectEnvelope("AMD Instinct MI300X", "MI300X 192GB", 304, 5.3, 1307.4);
  ExpectEnvelope("MI300X", "MI300X 192GB", 304, 5.3, 1307.4);
  ExpectEnvelope("AMD Instinct MI300X VF", "MI300X 192GB", 304, 5.3, 1307.4);
  ExpectEnvelope("AMD Instinct MI325X", "MI325X 256GB", 304, 6.0, 1307.4);
  // Table names and any case resolve too.
  ExpectEnvelope("l40s 48gb", "L40S 48GB", 142, 0.864, 362.05);
  ExpectEnvelope("nvidia a10g", "A10G 24GB", 80, 0.6, 125);

  auto h20 = EnvelopeForGpuName("NVIDIA H20");
  EXPECT_DOUBLE_EQ(*h20->PeakFlopsPerS(Precision::kFp8), 296e12);
  EXPECT_DOUBLE_EQ(*h20->PeakFlopsPerS(Precision::kTf32), 74e12);
  EXPECT_DOUBLE_EQ(*h20->PeakFlopsPerS(Precision::kFp32), 44e12);
  EXPECT_EQ(h20->power_mode, "400 W");
  auto a10 = EnvelopeForGpuName("NVIDIA A10");
  EXPECT_FALSE(a10->PeakFlopsPerS(Precision::kFp8).has_value());  // Ampere: no FP8
  EXPECT_NE(EnvelopeForGpuName("NVIDIA A10G")->source.find("A10's"), std::string::npos);
  auto mi300 = EnvelopeForGpuName("AMD Instinct MI300X");
  EXPECT_DOUBLE_EQ(*mi300->PeakFlopsPerS(Precision::kFp8), 2614.9e12);
  EXPECT_EQ(mi300->power_mode, "750 W");
  EXPECT_EQ(EnvelopeForGpuName("AMD Instinct MI325X")->power_mode, "1000 W");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA GB200")->power_mode, "1200 W");
}

TEST(HardwareEnvelope, LookalikeNamesResolveToTheirOwnPart) {
  // H20 is not H200, nor is H200 H20.
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA H20")->name, "H20 96GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA H200")->name, "H200 SXM 141GB");
  // GH200 is not H200; GB200 is not B200.
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA GH200 480GB")->name, "GH200 96GB HBM3");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA GB200")->name, "GB200 186GB");
  // L4 is not L40S; L40 (no S) has no row.
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA L4")->name, "L4 24GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA L40S")->name, "L40S 48GB");
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA L40").has_value());
  // A10 is not A100 (nor A10G).
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA A10")->name, "A10 24GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA A10G")->name, "A10G 24GB");
  EXPECT_EQ(EnvelopeForGpuName("NVIDIA A100-SXM4-80GB")->name, "A100 SXM4 80GB");
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA A100-PCIE-40GB").has_value());
  // Unknown parts: nullopt, never a guess.
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA T4").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("NVIDIA H800").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("AMD Instinct MI250X").has_value());
  EXPECT_FALSE(EnvelopeForGpuName("").has_value());
}

TEST(HardwareEnvelope, FirstFourRowsKeepTheirOrderAndFigures) {
  const auto& b = BuiltinEnvelopes();
  ASSERT_GE(b.size(), 4u);
  EXPECT_EQ(b[0].name, "A100 SXM4 80GB");
  EXPECT_EQ(b[1].name, "H100 SXM5 80GB");
  EXPECT_EQ(b[2].name, "H200 SXM 141GB");
  EXPECT_EQ(b[3].name, "B200 HGX 180GB");
  EXPECT_DOUBLE_EQ(*b[3].PeakFlopsPerS(Precision::kBf16), 2250e12);
  EXPECT_DOUBLE_EQ(*b[3].ridge_bf16_flop_per_byte, 281.25);
  EXPECT_DOUBLE_EQ(*b[0].ridge_bf16_flop_per_byte, 153);
  // Every row: unique name, a source, a power mode, and it resolves to itself.
  for (const HardwareEnvelope& e : b) {
    SCOPED_TRACE(e.name);
    EXPECT_FALSE(e.source.empty());
    EXPECT_FALSE(e.power_mode.empty());
    ASSERT_TRUE(EnvelopeForGpuName(e.name).has_value());
    EXPECT_EQ(EnvelopeForGpuName(e.name)->name, e.name);
    EXPECT_TRUE(e.vector_fp32_flops_per_s.has_value());
  }
}

TEST(HardwareEnvelope, NoEnvelopeMessage) {
  EXPECT_EQ(NoEnvelopeMessage("NVIDIA T4"), "no envelope for 'NVIDIA T4'; pass --envelope FILE");
  EXPECT_EQ(NoEnvelopeMessage(""), "no envelope for ''; pass --envelope FILE");
}

TEST(HardwareEnvelope, VectorPeaksAndFallback) {
  auto h100 = EnvelopeForGpuName("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*h100->VectorPeakFlopsPerS(Precision::kFp32), 66.9e12);
  EXPECT_DOUBLE_EQ(*h100->VectorPeakFlopsPerS(Precision::kTf32), 66.9e12);
  EXPECT_DOUBLE_EQ(*h100->VectorPeakFlopsPerS(Precision::kBf16), 133.8e12);
  EXPECT_DOUBLE_EQ(*h100->VectorPeakFlopsPerS(Precision::kFp16), 133.8e12);
  EXPECT_DOUBLE_EQ(*h100->VectorPeakFlopsPerS(Precision::kFp8), 133.8e12);
  EXPECT_DOUBLE_EQ(*h100->VectorRidgeFlopPerByte(Precision::kFp32), 66.9 / 3.35);

  auto a100 = EnvelopeForGpuName("NVIDIA A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(*a100->VectorPeakFlopsPerS(Precision::kFp32), 19.5e12);
  EXPECT_DOUBLE_EQ(*a100->VectorPeakFlopsPerS(Precision::kBf16), 39e12);
  EXPECT_DOUBLE_EQ(*EnvelopeForGpuName("NVIDIA H200")->VectorPeakFlopsPerS(Precision::kFp32),
                   67e12);
  EXPECT_DOUBLE_EQ(*EnvelopeForGpuName("NVIDIA B200")->VectorPeakFlopsPerS(Precision::kBf16),
                   150e12);
  EXPECT_DOUBLE_EQ(*EnvelopeForGpuName("NVIDIA H20")->VectorPeakFlopsPerS(Precision::kBf16),
                   88e12);

  // No vector BF16 figure: BF16 / FP16 / FP8 fall back to the vector FP32 peak.
  auto l4 = EnvelopeForGpuName("NVIDIA L4");
  EXPECT_FALSE(l4->vector_bf16_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*l4->VectorPeakFlopsPerS(Precision::kBf16), 30.3e12);
  EXPECT_DOUBLE_EQ(*l4->VectorPeakFlopsPerS(Precision::kFp16), 30.3e12);
  EXPECT_NEAR(*l4->VectorRidgeFlopPerByte(Precision::kBf16), 101, 1);  // 30.3 / 0.3
  auto mi300 = EnvelopeForGpuName("MI300X");
  EXPECT_DOUBLE_EQ(*mi300->VectorPeakFlopsPerS(Precision::kBf16), 163.4e12);

  // Neither known: nullopt, never 0.
  HardwareEnvelope bare;
  bare.hbm_bytes_per_s = 1e12;
  EXPECT_FALSE(bare.VectorPeakFlopsPerS(Precision::kBf16).has_value());
  EXPECT_FALSE(bare.VectorRidgeFlopPerByte(Precision::kFp32).has_value());
  bare.vector_bf16_flops_per_s = 10e12;  // BF16 only: FP32 has no fallback
  EXPECT_FALSE(bare.VectorPeakFlopsPerS(Precision::kFp32).has_value());
  EXPECT_DOUBLE_EQ(*bare.VectorRidgeFlopPerByte(Precision::kBf16), 10);
}

TEST(HardwareEnvelope, ParsesVectorPeaksAndSource) {
  auto e = ParseEnvelopeText(
      "name = Test GPU\n"
      "hbm_tb_per_s = 2\n"
      "bf16_tflops = 400\n"
      "vector_fp32_tflops = 40\n"
      "vector_bf16_tflops = 80\n"
      "source = vendor datasheet rev 3, dense column\n");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_DOUBLE_EQ(*e->vector_fp32_flops_per_s, 40e12);
  EXPECT_DOUBLE_EQ(*e->VectorPeakFlopsPerS(Precision::kBf16), 80e12);
  EXPECT_EQ(e->source, "vendor datasheet rev 3, dense column");

  // `none` clears a base's vector BF16: it then falls back to vector FP32.
  auto m = ParseEnvelopeText("base = H100\nvector_bf16_tflops = none\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->vector_bf16_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*m->VectorPeakFlopsPerS(Precision::kBf16), 66.9e12);
  // The base's citation says which figures the file replaced.
  EXPECT_NE(m->source.find("NVIDIA H100"), std::string::npos);
  EXPECT_NE(m->source.find("; overridden: vector_bf16_tflops"), std::string::npos);
  // Only name / power_mode changed: the base's citation stands as is.
  auto p = ParseEnvelopeText("base = NVIDIA L4\nname = L4 capped\npower_mode = 60 W\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->source, EnvelopeForGpuName("NVIDIA L4")->source);
  // An explicit source replaces the base's.
  auto s = ParseEnvelopeText("base = MI300X\nbf16_tflops = 1000\nsource = our GEMM sweep\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->source, "our GEMM sweep");
  EXPECT_NEAR(*s->ridge_bf16_flop_per_byte, 1000 / 5.3, 1e-9);

  auto bad = ParseEnvelopeText("name = x\nhbm_tb_per_s = 2\nbf16_tflops = 1\n"
                               "vector_fp32_tflops = -3\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "line 4: key 'vector_fp32_tflops': expected non-tensor TFLOP/s > 0, or `none` when "
            "not known");
  auto unknown = ParseEnvelopeText("name = x\nvector_fp64_tflops = 3\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("vector_bf16_tflops"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("source"), std::string::npos);
  // Vector peaks alone are not a peak: MFU needs a dense figure.
  auto vec_only = ParseEnvelopeText("name = x\nhbm_tb_per_s = 2\nvector_fp32_tflops = 3\n");
  ASSERT_FALSE(vec_only.ok());
  EXPECT_NE(vec_only.status().message().find("no peak FLOP/s"), std::string::npos);
}

}  // namespace
}  // namespace opmap::analysis
