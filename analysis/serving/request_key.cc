#include "analysis/serving/request_key.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "analysis/serving/step_annotation.h"

namespace opmap::analysis {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(a[i])) != lower[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view RequestKey(std::string_view range_name) {
  if (EqualsIgnoringCase(range_name, "request")) return "request";
  if (!IsStepAnnotationName(range_name)) return {};
  std::optional<StepAnnotation> step = ParseStepAnnotation(range_name);
  if (!step) return {};
  switch (step->source) {
    case StepSource::kProfilerStep: return "ProfilerStep";
    case StepSource::kIteration: return "iteration";
    default: break;
  }
  switch (step->phase) {
    case StepPhase::kPrefill: return "step:prefill";
    case StepPhase::kDecode: return "step:decode";
    case StepPhase::kMixed: return "step:mixed";
    case StepPhase::kIdle: return "step:idle";
    case StepPhase::kUnknown: break;
  }
  return "step";
}

}  // namespace opmap::analysis
