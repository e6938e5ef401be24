// Workload profile: every key, suffixes, per-revision keys, the errors (line + key), and
// the docs/metrics.md formulas checked by hand on a 7B-shaped profile.
#include "analysis/workload/workload_profile.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

using ::testing::HasSubstr;

constexpr char kProfile[] = R"(# a 7B-shaped decoder
model = "tiny-7b"
revision = r1
seed = 42,7
parameters = 7B
layers = 32
heads = 32
head_dim = 128
hidden = 4096
kv_heads = 8            # GQA
precision = bf16
prefill_tokens = 512
decode_tokens = 128
batch = 4
phase_mix = prefill=0.25, decode=0.75
sla_p50_ms = 80
sla_p95_ms = 150
sla_p99_ms = 250
throughput_target = 12.5
devices = 2
quality_metric = accuracy
quality_higher_is_better = true
quality_threshold = 0.70
quality.r1 = 0.72
quality.r2 = 0.71
precision.r2 = fp8
sparsity.r2 = 2:4
)";

std::string Status(const absl::StatusOr<WorkloadProfile>& p) {
  return p.ok() ? "OK" : std::string(p.status().message());
}

TEST(WorkloadProfile, ParsesEveryKey) {
  absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(kProfile);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->model, "tiny-7b");  // quotes stripped
  EXPECT_EQ(p->revision, "r1");
  EXPECT_EQ(p->seed, "42,7");
  EXPECT_DOUBLE_EQ(p->parameters, 7e9);
  EXPECT_EQ(p->layers, 32);
  EXPECT_EQ(p->heads, 32);
  EXPECT_EQ(p->head_dim, 128);
  EXPECT_EQ(p->hidden, 4096);
  EXPECT_EQ(p->kv_heads, 8);
  EXPECT_EQ(p->AttentionDim(), 4096);
  EXPECT_EQ(p->precision, Precision::kBf16);
  EXPECT_FALSE(p->weight_bytes.has_value());
  EXPECT_EQ(p->prefill_tokens, 512);
  EXPECT_EQ(p->decode_tokens, 128);
  EXPECT_EQ(p->batch, 4);
  ASSERT_EQ(p->phase_mix.size(), 2u);
  EXPECT_DOUBLE_EQ(p->phase_mix.at("prefill"), 0.25);
  EXPECT_DOUBLE_EQ(p->phase_mix.at("decode"), 0.75);
  EXPECT_EQ(p->sla_p50_ms, 80);
  EXPECT_EQ(p->sla_p95_ms, 150);
  EXPECT_EQ(p->sla_p99_ms, 250);
  EXPECT_EQ(p->throughput_target, 12.5);
  EXPECT_EQ(p->devices, 2);
  EXPECT_EQ(p->quality_metric, "accuracy");
  EXPECT_TRUE(p->quality_higher_is_better);
  EXPECT_EQ(p->quality_threshold, 0.70);
  EXPECT_EQ(p->quality.at("r1"), 0.72);
  EXPECT_EQ(p->quality.at("r2"), 0.71);
  EXPECT_EQ(p->PrecisionOf("r1"), Precision::kBf16);
  EXPECT_EQ(p->PrecisionOf("r2"), Precision::kFp8);
  EXPECT_EQ(p->revision_sparsity.at("r2"), "2:4");
  EXPECT_EQ(p->revision_sparsity.count("r1"), 0u);
}

TEST(WorkloadProfile, DefaultsAndSuffixes) {
  const std::string base =
      "model = m\nlayers = 2\nheads = 4\nhead_dim = 8\nhidden = 32\nprecision = FP16\n";
  for (const auto& [text, want] : std::vector<std::pair<std::string, double>>{
           {"350k", 3.5e5}, {"350K", 3.5e5}, {"125M", 1.25e8}, {"7.5B", 7.5e9},
           {"1.5e9", 1.5e9}, {"1000", 1000}}) {
    absl::StatusOr<WorkloadProfile> p =
        ParseWorkloadProfileText(base + "parameters = " + text + "\n");
    ASSERT_TRUE(p.ok()) << text << ": " << p.status();
    EXPECT_DOUBLE_EQ(p->parameters, want) << text;
    EXPECT_EQ(p->kv_heads, 4);  // default: heads
    EXPECT_EQ(p->batch, 1);
    EXPECT_EQ(p->devices, 1);
    EXPECT_TRUE(p->quality_higher_is_better);
    EXPECT_EQ(p->precision, Precision::kFp16);
    EXPECT_FALSE(p->sla_p99_ms.has_value());
  }
  for (const char* bad : {"7X", "-1B", "0", "B", "1e400"}) {
    absl::StatusOr<WorkloadProfile> p =
        ParseWorkloadProfileText(base + "parameters = " + bad + "\n");
    EXPECT_THAT(Status(p), HasSubstr("line 7: key 'parameters':")) << bad;
  }
}

TEST(WorkloadProfile, ErrorsNameLineAndKey) {
  const std::string head = "model = m\nparameters = 1B\n";  // lines 1-2
  const std::string rest = "heads = 4\nhead_dim = 8\nhidden = 32\nprecision = bf16\n";
  struct Case {
    std::string line3;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"layers = 0", "line 3: key 'layers': '0' is not a positive integer"},
           {"layers = 2.5", "line 3: key 'layers':"},
           {"layers = 2\nlayers = 3", "line 4: key 'layers': repeated"},
           {"layers = 2\nlayer = 3", "line 4: key 'layer': unknown"},
           {"layers = 2\nprecision.r2 = int8", "line 4: key 'precision.r2': expected fp32"},
           {"layers = 2\nquality.r1 = 0.7\nquality.r1 = 0.8", "line 5: key 'quality.r1': repeated"},
           {"layers = 2\nquality. = 0.7", "line 4: key 'quality.': empty revision"},
           {"layers = 2\nfoo.r1 = 1", "line 4: key 'foo.r1': unknown"},
           {"layers = 2\nquality_higher_is_better = maybe",
            "line 4: key 'quality_higher_is_better': 'maybe' is not a boolean"},
           {"layers = 2\nsla_p99_ms = -5", "line 4: key 'sla_p99_ms': expected a number > 0"},
           {"layers = 2\nthroughput_target = 0", "line 4: key 'throughput_target':"},
           {"layers = 2\nphase_mix = prefill=0.3,decode=0.6",
            "line 4: key 'phase_mix': fractions sum to 0.9, not 1"},
           {"layers = 2\nphase_mix = prefill=0.5,prefill=0.5", "phase 'prefill' repeated"},
           {"layers = 2\nphase_mix = prefill=1.5,decode=-0.5", "expected a fraction in [0, 1]"},
           {"layers = 2\nphase_mix = prefill", "expected phase=fraction"},
           {"layers = 2\nkv_heads = 8", "line 4: key 'kv_heads': 8 is more than heads (4)"},
           {"layers = 2\nbatch = ", "line 4: key 'batch': empty value"},
           {"layers 2", "workload profile:3: expected `key = value`"},
       }) {
    absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(head + c.line3 + "\n" + rest);
    EXPECT_THAT(Status(p), HasSubstr(c.want)) << c.line3;
  }
  // Fractions within 1e-6 of 1 are accepted; 1e-5 off is not.
  EXPECT_TRUE(ParseWorkloadProfileText(head + "layers = 2\nphase_mix = a=0.3333333,b=0.6666667\n" + rest).ok());
  EXPECT_FALSE(ParseWorkloadProfileText(head + "layers = 2\nphase_mix = a=0.33333,b=0.66666\n" + rest).ok());
}

TEST(WorkloadProfile, MissingRequiredKeysAreNamed) {
  EXPECT_EQ(Status(ParseWorkloadProfileText(
                "model = m\nparameters = 1B\nheads = 4\nhead_dim = 8\nhidden = 32\n"
                "precision = bf16\n")),
            "missing required key 'layers'");
  EXPECT_EQ(Status(ParseWorkloadProfileText("model = m\nparameters = 1B\nhidden = 32\n"
                                            "precision = bf16\n")),
            "missing required keys 'layers', 'heads', 'head_dim'");
  EXPECT_EQ(Status(ParseWorkloadProfileText("")),
            "missing required keys 'model', 'parameters', 'layers', 'heads', 'head_dim', "
            "'hidden', 'precision'");
}

TEST(WorkloadProfile, FormulasByHand) {
  absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(kProfile);
  ASSERT_TRUE(p.ok()) << p.status();
  // Prefill of 512 tokens: 2·7e9·512 = 7.168e12; 2·L·d_attn·P² = 2·32·4096·512² =
  // 68,719,476,736.
  EXPECT_DOUBLE_EQ(PrefillFlops(*p, 512), 7.168e12 + 68719476736.0);
  EXPECT_DOUBLE_EQ(PrefillFlops(*p, 0), 0);
  // Decode step at context 1024: 2·7e9 = 1.4e10; 4·32·4096·1024 = 536,870,912.
  EXPECT_DOUBLE_EQ(DecodeStepFlops(*p, 1024), 1.4e10 + 536870912.0);
  EXPECT_DOUBLE_EQ(DecodeStepFlops(*p, 0), 1.4e10);
  // Bytes: weights 7e9 × 2 (bf16) = 1.4e10, read once; KV per sequence
  // 2·L·kv_heads·head_dim·t·bytes = 2·32·8·128·1024·2 = 134,217,728, × batch 4.
  EXPECT_DOUBLE_EQ(DecodeStepBytes(*p, 1024), 1.4e10 + 4 * 134217728.0);
  // weight_bytes overrides N × bytes; the KV term keeps the profile precision.
  WorkloadProfile q = *p;
  q.weight_bytes = 7.5e9;
  EXPECT_DOUBLE_EQ(DecodeStepBytes(q, 1024), 7.5e9 + 4 * 134217728.0);
  q.precision = Precision::kFp8;
  q.weight_bytes.reset();
  EXPECT_DOUBLE_EQ(DecodeStepBytes(q, 1024), 7e9 + 4 * 134217728.0 / 2);
}

// Found by profile_fuzzer: decode_tokens = 5e17 made ModelFlopsPerRequest loop over every
// step (a hang), and heads × head_dim overflowed int64 (UBSan).
TEST(WorkloadProfile, FlopsPerRequestInClosedForm) {
  absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(kProfile);
  ASSERT_TRUE(p.ok()) << p.status();
  double by_steps = PrefillFlops(*p, 512);
  for (int64_t k = 0; k < 128; ++k) by_steps += DecodeStepFlops(*p, 512 + k);
  EXPECT_DOUBLE_EQ(ModelFlopsPerRequest(*p, nullptr).value(), 4 * by_steps);
  WorkloadProfile q = *p;
  q.decode_tokens = 500'000'000'000'000'000;
  const double huge = ModelFlopsPerRequest(q, nullptr).value();  // at once, not 5e17 steps
  EXPECT_TRUE(std::isfinite(huge));
  EXPECT_GT(huge, 1e40);
}

TEST(WorkloadProfile, AttentionDimOverflowIsRefused) {
  EXPECT_EQ(Status(ParseWorkloadProfileText(
                "model = m\nparameters = 1\nlayers = 1\nheads = 4611686018427387904\n"
                "head_dim = 4\nhidden = 1\nprecision = bf16\n")),
            "heads × head_dim (4611686018427387904 × 4) is too large");
}

TEST(WorkloadProfile, PrecisionNamesAndBytes) {
  EXPECT_EQ(ParsePrecisionName("BF16"), Precision::kBf16);
  EXPECT_EQ(ParsePrecisionName(" fp8 "), Precision::kFp8);
  EXPECT_EQ(ParsePrecisionName("tf32"), Precision::kTf32);
  EXPECT_EQ(ParsePrecisionName("int8"), std::nullopt);
  EXPECT_EQ(BytesPerElement(Precision::kFp32), 4);
  EXPECT_EQ(BytesPerElement(Precision::kTf32), 4);
  EXPECT_EQ(BytesPerElement(Precision::kBf16), 2);
  EXPECT_EQ(BytesPerElement(Precision::kFp16), 2);
  EXPECT_EQ(BytesPerElement(Precision::kFp8), 1);
}

}  // namespace
}  // namespace opmap::analysis
