// Tests of analysis/serving/step_annotation: the forms of docs/metrics.md's "Serving step
// annotations" on names taken from real traces (TraceLens' tests/traces/inference: vLLM and
// SGLang on Qwen3-8B) and from the writers' sources, the derivation rules, names that are
// not steps, malformed and hostile names, and numbers past 2^53.
#include "analysis/serving/step_annotation.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis {

// gtest prints enums as bytes otherwise; found by argument-dependent lookup.
void PrintTo(StepPhase phase, std::ostream* os) { *os << StepPhaseName(phase); }
void PrintTo(StepSource source, std::ostream* os) { *os << StepSourceName(source); }

namespace {

constexpr int64_t kStepU = kStepUnknown;

struct StepSumsWant {
  int64_t requests, query_tokens, kv_tokens, query_sq, query_kv;
};

void ExpectStepSums(const StepPhaseSums& got, const StepSumsWant& want, std::string_view what) {
  EXPECT_EQ(got.requests, want.requests) << what << " requests";
  EXPECT_EQ(got.query_tokens, want.query_tokens) << what << " Σ sq";
  EXPECT_EQ(got.kv_tokens, want.kv_tokens) << what << " Σ sk";
  EXPECT_EQ(got.query_sq, want.query_sq) << what << " Σ sq²";
  EXPECT_EQ(got.query_kv, want.query_kv) << what << " Σ sq·sk";
}

StepAnnotation MustParseStep(std::string_view name) {
  std::optional<StepAnnotation> step = ParseStepAnnotation(name);
  EXPECT_TRUE(step.has_value()) << name;
  EXPECT_TRUE(IsStepAnnotationName(name)) << name;
  if (!step.has_value()) return StepAnnotation();
  EXPECT_EQ(step->verbatim, name);
  return *step;
}

std::vector<std::pair<std::string, std::string>> StepExtraOf(const StepAnnotation& step) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const StepField& f : step.extra) out.emplace_back(f.key, f.value);
  return out;
}

using StepExtra = std::vector<std::pair<std::string, std::string>>;

// ----- vLLM ------------------------------------------------------------------------

// TraceLens tests/traces/inference/vllm_decode_full/graph_execution.json.gz: 32 decode
// requests, one token each, 55086 KV tokens between them.
TEST(StepAnnotationTest, VllmDetailedDecodeFromARealTrace) {
  const StepAnnotation s = MustParseStep(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  EXPECT_EQ(s.source, StepSource::kVllmDetailed);
  EXPECT_EQ(s.phase, StepPhase::kDecode);
  EXPECT_EQ(s.mode, "");
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.tokens, 32);
  ExpectStepSums(s.prefill, {0, 0, 0, 0, 0}, "prefill");
  ExpectStepSums(s.decode, {32, 32, 55086, 32, 55086}, "decode");
  EXPECT_EQ(s.iteration, kStepU);
  EXPECT_TRUE(s.extra.empty());
  EXPECT_TRUE(HasAttentionSums(s));
}

// vllm_prefilldecode_piecewise: chunked prefill of 9 requests beside 37 decodes; the
// leading 8192 is Σ sq over both phases (8155 + 37).
TEST(StepAnnotationTest, VllmDetailedMixedFromARealTrace) {
  const StepAnnotation s = MustParseStep(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
      "_generation_37(sq37sk34489sqsq37sqsk34489)");
  EXPECT_EQ(s.phase, StepPhase::kMixed);
  EXPECT_EQ(s.batch_size, 46);
  EXPECT_EQ(s.tokens, 8192);
  ExpectStepSums(s.prefill, {9, 8155, 8430, 7475785, 7671310}, "prefill");
  ExpectStepSums(s.decode, {37, 37, 34489, 37, 34489}, "decode");
  EXPECT_TRUE(HasAttentionSums(s));
}

// sglang_prefilldecode (TraceLens' SGLang 0.5.9 scheduler patch writes vLLM's form): 15
// fresh prompts of 1024 tokens, so Σ sq² = 15·1024² and sk = sq.
TEST(StepAnnotationTest, VllmDetailedPrefillFromARealSglangTrace) {
  const StepAnnotation s = MustParseStep(
      "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)"
      "_generation_0(sq0sk0sqsq0sqsk0)");
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  EXPECT_EQ(s.batch_size, 15);
  EXPECT_EQ(s.tokens, 15360);
  ExpectStepSums(s.prefill, {15, 15360, 15360, 15 * 1024 * 1024, 15 * 1024 * 1024}, "prefill");
  ExpectStepSums(s.decode, {0, 0, 0, 0, 0}, "decode");
}

// vLLM's own Worker.annotate_profile: requests and tokens per phase, no KV lengths.
TEST(StepAnnotationTest, VllmNative) {
  StepAnnotation s = MustParseStep("execute_context_2(14721)_generation_0(0)");
  EXPECT_EQ(s.source, StepSource::kVllm);
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  EXPECT_EQ(s.batch_size, 2);
  EXPECT_EQ(s.tokens, 14721);
  ExpectStepSums(s.prefill, {2, 14721, kStepU, kStepU, kStepU}, "prefill");
  ExpectStepSums(s.decode, {0, 0, 0, 0, 0}, "decode");
  EXPECT_FALSE(HasAttentionSums(s));

  s = MustParseStep("execute_context_0(0)_generation_32(128)");  // speculative: 4 per request
  EXPECT_EQ(s.phase, StepPhase::kDecode);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.tokens, 128);
  ExpectStepSums(s.decode, {32, 128, kStepU, kStepU, kStepU}, "decode");

  s = MustParseStep("execute_context_2(6144)_generation_3(3)");
  EXPECT_EQ(s.phase, StepPhase::kMixed);
  EXPECT_EQ(s.batch_size, 5);
  EXPECT_EQ(s.tokens, 6147);

  s = MustParseStep("execute_context_0(0)_generation_0(0)");
  EXPECT_EQ(s.phase, StepPhase::kIdle);
  EXPECT_EQ(s.batch_size, 0);
  EXPECT_EQ(s.tokens, 0);
  EXPECT_TRUE(HasAttentionSums(s));  // all zero: an empty step does no attention
}

// Older vLLM: new and cached requests. Only new requests are surely in prefill.
TEST(StepAnnotationTest, VllmNewCached) {
  StepAnnotation s = MustParseStep("execute_new_2_cached_30");
  EXPECT_EQ(s.source, StepSource::kVllmNewCached);
  EXPECT_EQ(s.phase, StepPhase::kUnknown);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.tokens, kStepU);
  ExpectStepSums(s.prefill, {kStepU, kStepU, kStepU, kStepU, kStepU}, "prefill");
  ExpectStepSums(s.decode, {kStepU, kStepU, kStepU, kStepU, kStepU}, "decode");
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"new", "2"}, {"cached", "30"}}));

  s = MustParseStep("execute_new_4_cached_0");
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  EXPECT_EQ(s.prefill.requests, 4);
  EXPECT_EQ(s.decode.requests, 0);

  s = MustParseStep("execute_new_0_cached_0");
  EXPECT_EQ(s.phase, StepPhase::kIdle);
}

// ----- SGLang ------------------------------------------------------------------------

// sglang_decode / sglang_prefilldecode traces: ModelRunner's step span.
TEST(StepAnnotationTest, SglangFromRealTraces) {
  StepAnnotation s = MustParseStep("step[DECODE bs=32]");
  EXPECT_EQ(s.source, StepSource::kSglang);
  EXPECT_EQ(s.mode, "DECODE");
  EXPECT_EQ(s.phase, StepPhase::kDecode);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.tokens, kStepU);  // one per request, or more with speculative decoding: not said
  ExpectStepSums(s.prefill, {0, 0, 0, 0, 0}, "prefill");
  ExpectStepSums(s.decode, {32, kStepU, kStepU, kStepU, kStepU}, "decode");
  EXPECT_FALSE(HasAttentionSums(s));

  s = MustParseStep("step[EXTEND bs=15 toks=15360]");
  EXPECT_EQ(s.mode, "EXTEND");
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  EXPECT_EQ(s.batch_size, 15);
  EXPECT_EQ(s.tokens, 15360);
  ExpectStepSums(s.prefill, {15, 15360, kStepU, kStepU, kStepU}, "prefill");
  ExpectStepSums(s.decode, {0, 0, 0, 0, 0}, "decode");
}

// TraceLens' roofline suffix (sglang_roofline_patches, step_span_utils.py).
TEST(StepAnnotationTest, SglangRooflineSuffix) {
  StepAnnotation s = MustParseStep(
      "step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]");
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  ExpectStepSums(s.prefill, {2, 14721, 14721, 108745533, 108745533}, "prefill");
  ExpectStepSums(s.decode, {0, 0, 0, 0, 0}, "decode");
  EXPECT_TRUE(HasAttentionSums(s));
  EXPECT_TRUE(s.extra.empty());

  // MTP: two query tokens per decode request.
  s = MustParseStep("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]");
  EXPECT_EQ(s.phase, StepPhase::kDecode);
  EXPECT_EQ(s.batch_size, 64);
  EXPECT_EQ(s.tokens, 128);
  ExpectStepSums(s.decode, {64, 128, 131072, 256, 262144}, "decode");
  EXPECT_TRUE(HasAttentionSums(s));

  s = MustParseStep(
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 "
      "g_sqsk=12]");
  EXPECT_EQ(s.phase, StepPhase::kMixed);
  EXPECT_EQ(s.batch_size, 2);
  EXPECT_EQ(s.tokens, 6);
  ExpectStepSums(s.prefill, {1, 5, 8, 25, 40}, "prefill");
  ExpectStepSums(s.decode, {1, 1, 12, 1, 12}, "decode");
  EXPECT_TRUE(HasAttentionSums(s));
}

TEST(StepAnnotationTest, SglangOtherModes) {
  StepAnnotation s = MustParseStep("step[MIXED bs=2]");  // the split is not stated
  EXPECT_EQ(s.phase, StepPhase::kMixed);
  EXPECT_EQ(s.batch_size, 2);
  EXPECT_EQ(s.prefill.requests, kStepU);
  EXPECT_EQ(s.decode.requests, kStepU);

  s = MustParseStep("step[TARGET_VERIFY bs=4]");
  EXPECT_EQ(s.mode, "TARGET_VERIFY");
  EXPECT_EQ(s.phase, StepPhase::kUnknown);
  EXPECT_EQ(s.batch_size, 4);

  s = MustParseStep("step[DRAFT_EXTEND_V2 bs=4]");
  EXPECT_EQ(s.mode, "DRAFT_EXTEND_V2");
  EXPECT_EQ(s.phase, StepPhase::kUnknown);

  s = MustParseStep("step[IDLE bs=0]");
  EXPECT_EQ(s.phase, StepPhase::kIdle);

  s = MustParseStep("step[EXTEND bs=0 toks=0]");
  EXPECT_EQ(s.phase, StepPhase::kIdle);

  s = MustParseStep("step[DECODE]");  // no fields: a step of unknown size
  EXPECT_EQ(s.phase, StepPhase::kDecode);
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.decode.requests, kStepU);
  EXPECT_EQ(s.prefill.requests, 0);
}

TEST(StepAnnotationTest, SglangUnknownFieldsAreKeptVerbatim) {
  StepAnnotation s = MustParseStep("step[DECODE bs=8 spec=3 tbo   ctx=(4096,4096) bs=9 ]");
  EXPECT_EQ(s.batch_size, 8);  // the first statement of a field wins
  EXPECT_EQ(s.decode.requests, 8);
  EXPECT_EQ(StepExtraOf(s),
            (StepExtra{{"spec", "3"}, {"tbo", ""}, {"ctx", "(4096,4096)"}, {"bs", "9"}}));
  // A value cannot hold ']' (it ends the name), so ATOM-style lists are not SGLang steps.
  EXPECT_FALSE(IsStepAnnotationName("step[DECODE bs=8 ctx=[4096, 4096]]"));
}

// A known field whose value is not a figure is kept, and blocks every rule that needs it.
TEST(StepAnnotationTest, SglangFieldThatIsNotAFigure) {
  StepAnnotation s = MustParseStep("step[DECODE bs=117/128]");
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.decode.requests, kStepU);
  EXPECT_EQ(s.phase, StepPhase::kDecode);  // from the mode
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"bs", "117/128"}}));

  s = MustParseStep("step[MIXED c=1 g=x]");
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.decode.requests, kStepU);
  EXPECT_EQ(s.phase, StepPhase::kMixed);

  s = MustParseStep("step[MIXED c=1 g=-1]");
  EXPECT_EQ(s.decode.requests, kStepU);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"g", "-1"}}));
}

// ----- PyTorch profiler and opmap's iteration ------------------------------------------

TEST(StepAnnotationTest, ProfilerStep) {
  StepAnnotation s = MustParseStep("ProfilerStep#134");
  EXPECT_EQ(s.source, StepSource::kProfilerStep);
  EXPECT_EQ(s.iteration, 134);
  EXPECT_EQ(s.phase, StepPhase::kUnknown);
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.tokens, kStepU);
  EXPECT_TRUE(s.extra.empty());

  EXPECT_EQ(MustParseStep("ProfilerStep#0").iteration, 0);

  // Any text after '#' is a profiler step, as the request rule has it; the text is kept.
  s = MustParseStep("ProfilerStep#warmup");
  EXPECT_EQ(s.iteration, kStepU);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"iteration", "warmup"}}));
  EXPECT_EQ(MustParseStep("ProfilerStep#").iteration, kStepU);
}

TEST(StepAnnotationTest, OpmapIteration) {
  for (std::string_view name : {"iteration", "ITERATION", "Iteration"}) {
    const StepAnnotation s = MustParseStep(name);
    EXPECT_EQ(s.source, StepSource::kIteration) << name;
    EXPECT_EQ(s.phase, StepPhase::kUnknown);
    EXPECT_EQ(s.batch_size, kStepU);
  }
}

// ----- names that are not steps -----------------------------------------------------

TEST(StepAnnotationTest, NamesThatAreNotSteps) {
  const std::vector<std::string_view> names = {
      "",
      "aten::mm",
      "nn.Module: LlamaDecoderLayer_3",
      "decoder_layer.3",
      "## Call CompiledFxGraph fxgraph_abc ##",
      "vllm::unified_attention_with_output",
      // vLLM's sub-phases inside a step (gpu_model_runner.py), not steps themselves.
      "gpu_model_runner: preprocess",
      "gpu_model_runner: forward",
      "gpu_model_runner: postprocess",
      "gpu_model_runner: sample",
      "gpu_model_runner: draft",
      "gpu_model_runner: bookkeep",
      "execute_model",
      "execute_segment_k_off_kernel__5x_cublas",
      "capture_128_decode",               // CUDA-graph capture (TraceLens' vLLM patch)
      "execute_diffusion_1_1024x1024",    // not a serving step
      "request",                          // a request, not a step
      "iterations",
      "iteration ",
      "ProfilerStep",
      "ProfilerStep 3",
      "profilerstep#3",
      // Malformed vLLM.
      "execute_",
      "execute_context_2(14721)_generation_0(0)x",
      "execute_context_2(14721)_generation_0(0",
      "execute_context_2 (14721)_generation_0(0)",
      " execute_context_2(14721)_generation_0(0)",
      "execute_context_(1)_generation_0(0)",
      "execute_context_-1(0)_generation_0(0)",
      "execute_context_+1(0)_generation_0(0)",
      "execute_context_1(0x10)_generation_0(0)",
      "Execute_context_2(14721)_generation_0(0)",
      "execute_0_context_0(sq0sk0sqsq0sqsk0)_",  // truncated (TraceLens' test)
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32)",
      "execute_32_context_0(sq0sk0sqsqsqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
      "execute_32_context_0(sk0sq0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
      "execute_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
      "execute_new_2_cached_",
      "execute_new__cached_3",
      "execute_new_2_cached_3_",
      // Malformed SGLang.
      "step",
      "step[",
      "step[]",
      "step[ bs=1]",
      "step[decode bs=1]",
      "step[_X bs=1]",
      "step[1X bs=1]",
      "step[DECODE bs=32",
      "step[DECODE bs=32] ",
      "step[DECODE bs=32]]",
      "step[DECODE,bs=32]",
      "step[DECODE\tbs=32]",
      "xstep[DECODE bs=1]",
      "Step[DECODE bs=1]",
      "step [DECODE bs=1]",
  };
  for (std::string_view name : names) {
    EXPECT_FALSE(ParseStepAnnotation(name).has_value()) << "'" << name << "'";
    EXPECT_FALSE(IsStepAnnotationName(name)) << "'" << name << "'";
  }
}

// Digits other than ASCII's (Arabic-Indic three, fullwidth one) are not numbers.
TEST(StepAnnotationTest, NonAsciiDigitsAreNotNumbers) {
  EXPECT_FALSE(IsStepAnnotationName("execute_context_\xd9\xa3(0)_generation_0(0)"));
  EXPECT_FALSE(IsStepAnnotationName("execute_new_\xef\xbc\x91_cached_0"));
  StepAnnotation s = MustParseStep("step[DECODE bs=\xef\xbc\x91]");
  EXPECT_EQ(s.batch_size, kStepU);
}

// ----- numbers past 2^53, and hostile bytes -----------------------------------------------

TEST(StepAnnotationTest, NumbersUpTo2To53AreFigures) {
  const std::string max = std::to_string(kMaxStepFigure);  // 9007199254740992
  StepAnnotation s = MustParseStep("ProfilerStep#" + max);
  EXPECT_EQ(s.iteration, kMaxStepFigure);
  EXPECT_EQ(MustParseStep("ProfilerStep#0000000000000000000000000032").iteration, 32);

  // 2^53 + 1, 2^64 (wraps to 0 in uint64_t arithmetic), 2^64 + 1 (wraps to 1), 10^30.
  for (std::string digits : {std::string("9007199254740993"), std::string("18446744073709551616"),
                             std::string("18446744073709551617"), std::string(31, '9')}) {
    s = MustParseStep("ProfilerStep#" + digits);
    EXPECT_EQ(s.iteration, kStepU) << digits;
    EXPECT_EQ(StepExtraOf(s), (StepExtra{{"iteration", digits}})) << digits;
  }
}

TEST(StepAnnotationTest, VllmNumberPast2To53IsUnknownAndKept) {
  const std::string big = "18446744073709551617";
  StepAnnotation s = MustParseStep("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk" +
                               big + "sqsq32sqsk55086)");
  EXPECT_EQ(s.decode.kv_tokens, kStepU);
  EXPECT_EQ(s.decode.query_kv, 55086);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"g_sk", big}}));
  EXPECT_FALSE(HasAttentionSums(s));

  // An unknown request count: no phase from counts, no batch size.
  s = MustParseStep("execute_context_" + big + "(5)_generation_1(1)");
  EXPECT_EQ(s.prefill.requests, kStepU);
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.phase, StepPhase::kUnknown);
  EXPECT_EQ(s.tokens, 6);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"context", big}}));

  // A stated number past 2^53 with zero requests is not replaced by the zero rule.
  s = MustParseStep("execute_1_context_0(sq0sk" + big +
                "sqsq0sqsk0)_generation_1(sq1sk1sqsq1sqsk1)");
  EXPECT_EQ(s.prefill.kv_tokens, kStepU);
  EXPECT_EQ(s.prefill.query_tokens, 0);

  // Each part a figure, their sum not: the derived total is unknown.
  const std::string max = std::to_string(kMaxStepFigure);
  s = MustParseStep("execute_context_1(" + max + ")_generation_1(1)");
  EXPECT_EQ(s.prefill.query_tokens, kMaxStepFigure);
  EXPECT_EQ(s.tokens, kStepU);
  s = MustParseStep("execute_new_" + max + "_cached_1");
  EXPECT_EQ(s.batch_size, kStepU);
}

TEST(StepAnnotationTest, SglangNumberPast2To53IsUnknownAndKept) {
  StepAnnotation s = MustParseStep("step[EXTEND bs=99999999999999999999 toks=12]");
  EXPECT_EQ(s.batch_size, kStepU);
  EXPECT_EQ(s.prefill.requests, kStepU);
  EXPECT_EQ(s.tokens, 12);
  EXPECT_EQ(s.phase, StepPhase::kPrefill);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"bs", "99999999999999999999"}}));
}

TEST(StepAnnotationTest, EmbeddedNulAndLongNames) {
  const std::string with_nul("step[DECODE bs=3\0x]", 19);
  StepAnnotation s = MustParseStep(with_nul);
  EXPECT_EQ(s.batch_size, kStepU);
  ASSERT_EQ(s.extra.size(), 1u);
  EXPECT_EQ(s.extra[0].value, std::string("3\0x", 3));
  EXPECT_EQ(s.verbatim.size(), 19u);

  // '\0' is not a digit: the text after '#' is kept, and it is still a profiler step.
  s = MustParseStep(std::string("ProfilerStep#1\0", 15));
  EXPECT_EQ(s.iteration, kStepU);
  EXPECT_EQ(StepExtraOf(s), (StepExtra{{"iteration", std::string("1\0", 2)}}));

  // A megabyte of digits, of fields, of spaces: linear, and still the right answer.
  const std::string digits(1 << 20, '7');
  s = MustParseStep("execute_context_" + digits + "(1)_generation_0(0)");
  EXPECT_EQ(s.prefill.requests, kStepU);
  std::string fields = "step[DECODE";
  while (fields.size() < (1u << 20)) fields += " k=v";
  s = MustParseStep(fields + " bs=5]");
  EXPECT_EQ(s.batch_size, 5);
  EXPECT_EQ(s.extra.size(), (fields.size() - 11) / 4);
  EXPECT_TRUE(IsStepAnnotationName("step[DECODE" + std::string(1 << 20, ' ') + "]"));
  EXPECT_FALSE(IsStepAnnotationName("step[DECODE" + std::string(1 << 20, ' ')));
}

// Random names over the grammar's alphabet and random edits of real names: the cheap check
// agrees with the parser, and every figure is unknown or within [0, 2^53].
TEST(StepAnnotationTest, RandomNamesKeepTheInvariants) {
  const std::vector<std::string> seeds = {
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
      "execute_context_2(6144)_generation_3(3)",
      "execute_new_2_cached_30",
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12]",
      "step[EXTEND bs=15 toks=15360]",
      "ProfilerStep#134",
      "iteration",
  };
  static constexpr char kAlphabet[] = "execut_ontxgaiqsk()[]=# 0123456789EXTNDCOMIbsPfl\xff\0";
  const std::string alphabet(kAlphabet, sizeof(kAlphabet) - 1);  // with the '\0'

  std::mt19937 rng(37);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int parsed = 0;
  for (int i = 0; i < 60000; ++i) {
    std::string name;
    if (i % 2 == 0) {
      name = seeds[pick(seeds.size())];
      for (int e = 1 + static_cast<int>(pick(3)); e > 0 && !name.empty(); --e) {
        const size_t at = pick(name.size());
        switch (pick(4)) {
          case 0: name[at] = alphabet[pick(alphabet.size())]; break;
          case 1: name.erase(at, 1); break;
          case 2: name.insert(at, 1, alphabet[pick(alphabet.size())]); break;
          case 3: name.insert(at, std::string(1 + pick(25), '9')); break;
        }
      }
    } else {
      const size_t n = pick(40);
      for (size_t k = 0; k < n; ++k) name += alphabet[pick(alphabet.size())];
    }
    const std::optional<StepAnnotation> s = ParseStepAnnotation(name);
    ASSERT_EQ(s.has_value(), IsStepAnnotationName(name)) << name;
    if (!s.has_value()) continue;
    ++parsed;
    ASSERT_EQ(s->verbatim, name);
    for (int64_t f : {s->batch_size, s->tokens, s->iteration, s->prefill.requests,
                      s->prefill.query_tokens, s->prefill.kv_tokens, s->prefill.query_sq,
                      s->prefill.query_kv, s->decode.requests, s->decode.query_tokens,
                      s->decode.kv_tokens, s->decode.query_sq, s->decode.query_kv}) {
      ASSERT_TRUE(f == kStepU || (f >= 0 && f <= kMaxStepFigure)) << name << " " << f;
    }
  }
  EXPECT_GT(parsed, 1000);  // the edits leave many names parseable: both sides are tested
}

TEST(StepAnnotationTest, Names) {
  EXPECT_EQ(StepSourceName(StepSource::kVllmDetailed), "vllm_detailed");
  EXPECT_EQ(StepSourceName(StepSource::kVllm), "vllm");
  EXPECT_EQ(StepSourceName(StepSource::kVllmNewCached), "vllm_new_cached");
  EXPECT_EQ(StepSourceName(StepSource::kSglang), "sglang");
  EXPECT_EQ(StepSourceName(StepSource::kProfilerStep), "profiler_step");
  EXPECT_EQ(StepSourceName(StepSource::kIteration), "iteration");
  EXPECT_EQ(StepSourceName(static_cast<StepSource>(200)), "unknown");
  EXPECT_EQ(StepPhaseName(StepPhase::kUnknown), "unknown");
  EXPECT_EQ(StepPhaseName(StepPhase::kPrefill), "prefill");
  EXPECT_EQ(StepPhaseName(StepPhase::kDecode), "decode");
  EXPECT_EQ(StepPhaseName(StepPhase::kMixed), "mixed");
  EXPECT_EQ(StepPhaseName(StepPhase::kIdle), "idle");
  EXPECT_EQ(StepPhaseName(static_cast<StepPhase>(200)), "unknown");
}

}  // namespace
}  // namespace opmap::analysis
