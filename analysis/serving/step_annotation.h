// Serving step annotations: the host ranges an inference server (vLLM, SGLang) or the
// PyTorch profiler opens around one scheduler step, recognised and read from their names.
// The grammar, what each field means and the sources it was read from are in
// docs/metrics.md, "Serving step annotations"; change them there and here together.
//
// A step range encloses every operator of the step, so it is not an operator itself:
// IsStepAnnotationName keeps such ranges out of operator statistics, and
// ParseStepAnnotation reads what the step ran — requests and tokens per phase and, where
// the name carries them, the summed query/KV lengths and their products that attention
// FLOPs and bytes of a paged-attention step are computed from.
//
// Every figure is what the name states, or follows from it by a rule docs/metrics.md
// writes out (a phase with no requests has zero tokens; a total is the sum of its known
// parts). A figure the name does not give is kStepUnknown, never guessed. Fields the
// struct has no member for, and values that are not figures, are kept verbatim in
// `extra`.
//
// Example:
//   if (std::optional<StepAnnotation> step = ParseStepAnnotation(range_name)) {
//     if (step->phase == StepPhase::kDecode && HasAttentionSums(*step)) {
//       int64_t kv = step->decode.kv_tokens;  // Σ KV length over the decode requests
//     }
//   }
//
// Thread safety: pure functions of their arguments. Safe on any bytes and any length
// (linear time, no recursion); nothing throws.
#ifndef OPMAP_ANALYSIS_SERVING_STEP_ANNOTATION_H_
#define OPMAP_ANALYSIS_SERVING_STEP_ANNOTATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opmap::analysis {

// Which writer's format the name is in. The values are stable: they may be stored.
enum class StepSource : uint8_t {
  // execute_T_context_R(sqAskBsqsqCsqskD)_generation_R(sqAskBsqsqCsqskD): TraceLens' vLLM
  // patch (detailed_trace_annotation) and its SGLang 0.5.9 scheduler patch.
  kVllmDetailed = 0,
  // execute_context_R(T)_generation_R(T): vLLM's Worker.annotate_profile.
  kVllm = 1,
  // execute_new_N_cached_M: older vLLM's Worker.annotate_profile.
  kVllmNewCached = 2,
  // step[MODE key=value ...]: SGLang's ModelRunner step span (build_step_span_name).
  kSglang = 3,
  // ProfilerStep#N: torch.profiler.profile.step().
  kProfilerStep = 4,
  // An NVTX/record_function range named exactly "iteration" (ASCII case ignored): opmap's
  // iteration subject (docs/collector.md, request ranges).
  kIteration = 5,
};

// Prefill: only context/extend requests; decode: only generation requests; mixed: both;
// idle: a step with no requests. Unknown when the name does not tell.
enum class StepPhase : uint8_t {
  kUnknown = 0,
  kPrefill = 1,
  kDecode = 2,
  kMixed = 3,
  kIdle = 4,
};

// "vllm_detailed", "vllm", "vllm_new_cached", "sglang", "profiler_step", "iteration";
// "unknown" for an out-of-range value.
std::string_view StepSourceName(StepSource source);
// "unknown", "prefill", "decode", "mixed", "idle".
std::string_view StepPhaseName(StepPhase phase);

// A figure the name does not give.
inline constexpr int64_t kStepUnknown = -1;
// The largest figure read from a name: 2^53, so every figure is exact as a double too
// (JSON readers). A larger number is not a figure: its field stays kStepUnknown and the
// digits are kept in `extra`.
inline constexpr int64_t kMaxStepFigure = int64_t{1} << 53;

// One phase's requests of the step and their per-request lengths, summed. For request i,
// sq_i = tokens it runs this step (its query length), sk_i = its KV length after the step
// (cached + new tokens). These are what a paged-attention roofline needs: the QKᵀ and PV
// work of request i is proportional to sq_i·sk_i, less the masked half of sq_i² when its
// queries attend causally to each other.
struct StepPhaseSums {
  int64_t requests = kStepUnknown;
  int64_t query_tokens = kStepUnknown;  // Σ sq_i
  int64_t kv_tokens = kStepUnknown;     // Σ sk_i
  int64_t query_sq = kStepUnknown;      // Σ sq_i²
  int64_t query_kv = kStepUnknown;      // Σ sq_i·sk_i
};

// A field of the name kept as written: `key` as the format names it (SGLang's key, or the
// docs/metrics.md name of a vLLM position such as "c_sqsk"), `value` verbatim. A SGLang
// token without '=' is a key with an empty value.
struct StepField {
  std::string key;
  std::string value;
};

struct StepAnnotation {
  StepSource source = StepSource::kIteration;
  StepPhase phase = StepPhase::kUnknown;
  std::string mode;                    // SGLang's forward mode ("DECODE"); "" otherwise
  int64_t batch_size = kStepUnknown;   // requests in the step (both phases)
  int64_t tokens = kStepUnknown;       // tokens the step runs (both phases)
  StepPhaseSums prefill;               // context / extend requests
  StepPhaseSums decode;                // generation / decode requests
  int64_t iteration = kStepUnknown;    // N of ProfilerStep#N
  std::vector<StepField> extra;        // in the order the name writes them
  std::string verbatim;                // the whole name
};

// The step a range name describes, or nullopt when the name is not one of the forms of
// docs/metrics.md (an operator such as "aten::mm", a module, vLLM's sub-phases
// "gpu_model_runner: forward", a "request" range, a kernel name).
std::optional<StepAnnotation> ParseStepAnnotation(std::string_view name);

// ParseStepAnnotation(name).has_value(), without building the result (no allocation).
bool IsStepAnnotationName(std::string_view name);

// True when all four sums of both phases are known: the inputs of the paged-attention
// FLOP and byte formulas (docs/metrics.md, "Serving step annotations").
bool HasAttentionSums(const StepAnnotation& step);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SERVING_STEP_ANNOTATION_H_
