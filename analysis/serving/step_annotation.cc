#include "analysis/serving/step_annotation.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/text/text_util.h"

namespace opmap::analysis {
namespace {

// While parsing, a field the name states with something that is not a figure (a number
// past kMaxStepFigure, SGLang's "bs=117/128") holds this instead of kStepUnknown, so the
// derivation rules do not fill it in; Finish turns it into kStepUnknown.
constexpr int64_t kStatedNotAFigure = -2;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsModeChar(char c) { return (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_'; }

// Removes `literal` from the front of `s`; false (s unchanged) when `s` does not start so.
bool Take(std::string_view& s, std::string_view literal) {
  if (!s.starts_with(literal)) return false;
  s.remove_prefix(literal.size());
  return true;
}

// Removes the run of ASCII digits at the front of `s` and returns it (empty: none).
std::string_view TakeDigits(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  std::string_view digits = s.substr(0, n);
  s.remove_prefix(n);
  return digits;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// The value of a non-empty run of digits, or kStatedNotAFigure past kMaxStepFigure.
// Leading zeros are skipped first, so a long run of them is still the small number it
// spells; 16 significant digits fit uint64_t with room to spare.
int64_t FigureOf(std::string_view digits) {
  size_t zeros = 0;
  while (zeros + 1 < digits.size() && digits[zeros] == '0') ++zeros;
  digits.remove_prefix(zeros);
  if (digits.size() > 16) return kStatedNotAFigure;
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');
  if (value > static_cast<uint64_t>(kMaxStepFigure)) return kStatedNotAFigure;
  return static_cast<int64_t>(value);
}

// Builds one StepAnnotation. With keep_text false nothing is allocated: only the grammar
// and the figures are checked (IsStepAnnotationName).
class Builder {
 public:
  Builder(StepAnnotation& out, bool keep_text) : out_(out), keep_text_(keep_text) {}

  StepAnnotation& out() { return out_; }

  // Sets *field from `digits` (a run of digits the grammar has matched); a number past
  // kMaxStepFigure leaves the field marked and keeps the digits under `key`.
  void Figure(std::string_view key, std::string_view digits, int64_t* field) {
    *field = FigureOf(digits);
    if (*field == kStatedNotAFigure) Extra(key, digits);
  }

  void Extra(std::string_view key, std::string_view value) {
    if (keep_text_) out_.extra.push_back({std::string(key), std::string(value)});
  }

  void Mode(std::string_view mode) {
    if (keep_text_) out_.mode = std::string(mode);
  }

 private:
  StepAnnotation& out_;
  bool keep_text_;
};

// "(sqAskBsqsqCsqskD)" into `sums`; `keys` name the four fields in `extra` ("c_sq", ...).
bool TakeVllmSums(std::string_view& s, const std::array<std::string_view, 4>& keys,
                  StepPhaseSums& sums, Builder& b) {
  // Each literal is matched exactly before its digits, so "sq" cannot swallow "sqsq".
  const std::array<std::string_view, 4> literals = {"(sq", "sk", "sqsq", "sqsk"};
  const std::array<int64_t*, 4> fields = {&sums.query_tokens, &sums.kv_tokens,
                                          &sums.query_sq, &sums.query_kv};
  for (size_t i = 0; i < literals.size(); ++i) {
    if (!Take(s, literals[i])) return false;
    std::string_view digits = TakeDigits(s);
    if (digits.empty()) return false;
    b.Figure(keys[i], digits, fields[i]);
  }
  return Take(s, ")");
}

constexpr std::array<std::string_view, 4> kContextKeys = {"c_sq", "c_sk", "c_sqsq", "c_sqsk"};
constexpr std::array<std::string_view, 4> kGenerationKeys = {"g_sq", "g_sk", "g_sqsq",
                                                             "g_sqsk"};

// A request count "R" after "_context_" / "_generation_" etc.
bool TakeCount(std::string_view& s, std::string_view key, int64_t* field, Builder& b) {
  std::string_view digits = TakeDigits(s);
  if (digits.empty()) return false;
  b.Figure(key, digits, field);
  return true;
}

// The name after "execute_". Whole-name matches only: vLLM writes nothing after them, and
// kernel names such as "execute_segment_k_off_kernel..." start with "execute_" too.
bool ParseVllm(std::string_view s, Builder& b) {
  StepAnnotation& out = b.out();
  if (Take(s, "context_")) {
    // execute_context_R(T)_generation_R(T)
    out.source = StepSource::kVllm;
    if (!TakeCount(s, "context", &out.prefill.requests, b) || !Take(s, "(") ||
        !TakeCount(s, "c_sq", &out.prefill.query_tokens, b) || !Take(s, ")_generation_") ||
        !TakeCount(s, "generation", &out.decode.requests, b) || !Take(s, "(") ||
        !TakeCount(s, "g_sq", &out.decode.query_tokens, b) || !Take(s, ")")) {
      return false;
    }
    return s.empty();
  }
  if (Take(s, "new_")) {
    // execute_new_N_cached_M: new requests are all in prefill; a cached one may be in
    // decode or in a later chunk of its prefill, so the split is known only when M = 0.
    out.source = StepSource::kVllmNewCached;
    std::string_view new_digits = TakeDigits(s);
    if (new_digits.empty() || !Take(s, "_cached_")) return false;
    std::string_view cached_digits = TakeDigits(s);
    if (cached_digits.empty() || !s.empty()) return false;
    b.Extra("new", new_digits);
    b.Extra("cached", cached_digits);
    const int64_t new_requests = FigureOf(new_digits);
    const int64_t cached_requests = FigureOf(cached_digits);
    if (new_requests >= 0 && cached_requests >= 0 &&
        new_requests + cached_requests <= kMaxStepFigure) {
      out.batch_size = new_requests + cached_requests;
    }
    if (cached_requests == 0) {
      out.prefill.requests = new_requests;
      out.decode.requests = 0;
    }
    return true;
  }
  // execute_T_context_R(sq..sk..sqsq..sqsk..)_generation_R(sq..sk..sqsq..sqsk..)
  out.source = StepSource::kVllmDetailed;
  return TakeCount(s, "tokens", &out.tokens, b) && Take(s, "_context_") &&
         TakeCount(s, "context", &out.prefill.requests, b) &&
         TakeVllmSums(s, kContextKeys, out.prefill, b) && Take(s, "_generation_") &&
         TakeCount(s, "generation", &out.decode.requests, b) &&
         TakeVllmSums(s, kGenerationKeys, out.decode, b) && s.empty();
}

// The SGLang keys StepAnnotation has a member for, as build_step_span_name and TraceLens'
// roofline suffix write them.
struct SglangKey {
  std::string_view name;
  int64_t StepAnnotation::*top;    // or, when null:
  StepPhaseSums StepAnnotation::*phase;
  int64_t StepPhaseSums::*sum;
};
constexpr std::array<SglangKey, 12> kSglangKeys = {{
    {"bs", &StepAnnotation::batch_size, nullptr, nullptr},
    {"toks", &StepAnnotation::tokens, nullptr, nullptr},
    {"c", nullptr, &StepAnnotation::prefill, &StepPhaseSums::requests},
    {"c_sq", nullptr, &StepAnnotation::prefill, &StepPhaseSums::query_tokens},
    {"c_sk", nullptr, &StepAnnotation::prefill, &StepPhaseSums::kv_tokens},
    {"c_sqsq", nullptr, &StepAnnotation::prefill, &StepPhaseSums::query_sq},
    {"c_sqsk", nullptr, &StepAnnotation::prefill, &StepPhaseSums::query_kv},
    {"g", nullptr, &StepAnnotation::decode, &StepPhaseSums::requests},
    {"g_sq", nullptr, &StepAnnotation::decode, &StepPhaseSums::query_tokens},
    {"g_sk", nullptr, &StepAnnotation::decode, &StepPhaseSums::kv_tokens},
    {"g_sqsq", nullptr, &StepAnnotation::decode, &StepPhaseSums::query_sq},
    {"g_sqsk", nullptr, &StepAnnotation::decode, &StepPhaseSums::query_kv},
}};

// The index of `key` in kSglangKeys, or -1.
int SglangKeyIndex(std::string_view key) {
  for (size_t i = 0; i < kSglangKeys.size(); ++i) {
    if (kSglangKeys[i].name == key) return static_cast<int>(i);
  }
  return -1;
}

int64_t* SglangField(StepAnnotation& out, int index) {
  const SglangKey& k = kSglangKeys[static_cast<size_t>(index)];
  return k.top != nullptr ? &(out.*k.top) : &((out.*k.phase).*k.sum);
}

// The name after "step[": MODE, then space-separated tokens, then "]" ending the name.
// `*mode` is set to the MODE.
bool ParseSglang(std::string_view s, Builder& b, std::string_view* mode) {
  StepAnnotation& out = b.out();
  out.source = StepSource::kSglang;
  size_t n = 0;
  while (n < s.size() && IsModeChar(s[n])) ++n;
  if (n == 0 || IsDigit(s[0]) || s[0] == '_') return false;
  *mode = s.substr(0, n);
  s.remove_prefix(n);
  b.Mode(*mode);
  uint32_t seen = 0;  // bit i: kSglangKeys[i] was stated; a later statement goes to extra
  for (;;) {
    if (s.empty()) return false;
    if (s[0] == ']') {
      s.remove_prefix(1);
      break;
    }
    if (s[0] != ' ') return false;
    while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
    size_t end = 0;
    while (end < s.size() && s[end] != ' ' && s[end] != ']') ++end;
    if (end == 0) continue;  // spaces before "]"
    const std::string_view token = s.substr(0, end);
    s.remove_prefix(end);
    const size_t eq = token.find('=');
    const std::string_view key = token.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : token.substr(eq + 1);
    const int index = eq == std::string_view::npos ? -1 : SglangKeyIndex(key);
    if (index < 0 || (seen & (1u << index)) != 0) {
      b.Extra(key, value);
      continue;
    }
    seen |= 1u << index;
    int64_t* field = SglangField(out, index);
    if (AllDigits(value)) {
      b.Figure(key, value, field);
    } else {
      *field = kStatedNotAFigure;  // e.g. "bs=117/128": stated, but not a figure
      b.Extra(key, value);
    }
  }
  if (!s.empty()) return false;

  // Requests per phase from the mode (SGLang's ForwardMode): EXTEND runs only extend
  // requests and DECODE only decode ones, bs of them; MIXED states its split as c= g=.
  if (*mode == "EXTEND") {
    if (out.prefill.requests == kStepUnknown) out.prefill.requests = out.batch_size;
    if (out.decode.requests == kStepUnknown) out.decode.requests = 0;
  } else if (*mode == "DECODE") {
    if (out.decode.requests == kStepUnknown) out.decode.requests = out.batch_size;
    if (out.prefill.requests == kStepUnknown) out.prefill.requests = 0;
  }
  return true;
}

StepPhase PhaseOfMode(std::string_view mode) {
  if (mode == "EXTEND") return StepPhase::kPrefill;
  if (mode == "DECODE") return StepPhase::kDecode;
  if (mode == "MIXED") return StepPhase::kMixed;
  if (mode == "IDLE") return StepPhase::kIdle;
  return StepPhase::kUnknown;
}

// a + b when both are known figures and the sum is one; kStepUnknown otherwise.
int64_t SumOf(int64_t a, int64_t b) {
  if (a < 0 || b < 0 || a + b > kMaxStepFigure) return kStepUnknown;
  return a + b;
}

void ZeroIfNoRequests(StepPhaseSums& sums) {
  if (sums.requests != 0) return;
  for (int64_t* f : {&sums.query_tokens, &sums.kv_tokens, &sums.query_sq, &sums.query_kv}) {
    if (*f == kStepUnknown) *f = 0;
  }
}

void ForgetMarks(StepPhaseSums& sums) {
  for (int64_t* f :
       {&sums.requests, &sums.query_tokens, &sums.kv_tokens, &sums.query_sq, &sums.query_kv}) {
    if (*f < 0) *f = kStepUnknown;
  }
}

// The derivation rules of docs/metrics.md, in order; `mode` is SGLang's (or "").
void Finish(StepAnnotation& out, std::string_view mode) {
  ZeroIfNoRequests(out.prefill);
  ZeroIfNoRequests(out.decode);
  if (out.batch_size == kStepUnknown) {
    out.batch_size = SumOf(out.prefill.requests, out.decode.requests);
  }
  if (out.tokens == kStepUnknown) {
    out.tokens = SumOf(out.prefill.query_tokens, out.decode.query_tokens);
  }
  // A phase with no tokens leaves all of the step's tokens to the other (SGLang's EXTEND
  // states toks, not c_sq).
  if (out.tokens >= 0) {
    if (out.prefill.query_tokens == kStepUnknown && out.decode.query_tokens == 0) {
      out.prefill.query_tokens = out.tokens;
    }
    if (out.decode.query_tokens == kStepUnknown && out.prefill.query_tokens == 0) {
      out.decode.query_tokens = out.tokens;
    }
  }
  const int64_t p = out.prefill.requests;
  const int64_t d = out.decode.requests;
  if (p >= 0 && d >= 0) {
    out.phase = p > 0 && d > 0   ? StepPhase::kMixed
                : p > 0          ? StepPhase::kPrefill
                : d > 0          ? StepPhase::kDecode
                                 : StepPhase::kIdle;
  } else {
    out.phase = PhaseOfMode(mode);
  }
  ForgetMarks(out.prefill);
  ForgetMarks(out.decode);
  for (int64_t* f : {&out.batch_size, &out.tokens, &out.iteration}) {
    if (*f < 0) *f = kStepUnknown;
  }
}

bool Parse(std::string_view name, bool keep_text, StepAnnotation& out) {
  Builder b(out, keep_text);
  std::string_view s = name;
  std::string_view mode;
  if (Take(s, "execute_")) {
    if (!ParseVllm(s, b)) return false;
  } else if (Take(s, "step[")) {
    if (!ParseSglang(s, b, &mode)) return false;
  } else if (Take(s, "ProfilerStep#")) {
    // torch.profiler writes "ProfilerStep#" + str(step_num). Any other text after the
    // '#' still makes a profiler step (as docs/collector.md's request rule has it), with
    // the text kept.
    out.source = StepSource::kProfilerStep;
    if (AllDigits(s)) {
      b.Figure("iteration", s, &out.iteration);
    } else {
      b.Extra("iteration", s);
    }
  } else if (text::EqualsIgnoreCase(name, "iteration")) {
    out.source = StepSource::kIteration;
  } else {
    return false;
  }
  Finish(out, mode);
  if (keep_text) out.verbatim = std::string(name);
  return true;
}

}  // namespace

std::string_view StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kVllmDetailed: return "vllm_detailed";
    case StepSource::kVllm: return "vllm";
    case StepSource::kVllmNewCached: return "vllm_new_cached";
    case StepSource::kSglang: return "sglang";
    case StepSource::kProfilerStep: return "profiler_step";
    case StepSource::kIteration: return "iteration";
  }
  return "unknown";
}

std::string_view StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kUnknown: return "unknown";
    case StepPhase::kPrefill: return "prefill";
    case StepPhase::kDecode: return "decode";
    case StepPhase::kMixed: return "mixed";
    case StepPhase::kIdle: return "idle";
  }
  return "unknown";
}

std::optional<StepAnnotation> ParseStepAnnotation(std::string_view name) {
  StepAnnotation out;
  if (!Parse(name, /*keep_text=*/true, out)) return std::nullopt;
  return out;
}

bool IsStepAnnotationName(std::string_view name) {
  // Every form starts with one of these letters; most range names are rejected here.
  if (name.empty()) return false;
  const char c = name[0];
  if (c != 'e' && c != 's' && c != 'P' && c != 'i' && c != 'I') return false;
  StepAnnotation scratch;
  return Parse(name, /*keep_text=*/false, scratch);
}

bool HasAttentionSums(const StepAnnotation& step) {
  for (const StepPhaseSums* p : {&step.prefill, &step.decode}) {
    if (p->query_tokens < 0 || p->kv_tokens < 0 || p->query_sq < 0 || p->query_kv < 0) {
      return false;
    }
  }
  return true;
}

}  // namespace opmap::analysis
