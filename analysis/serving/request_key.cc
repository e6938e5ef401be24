#include "analysis/serving/request_key.h"

#include <optional>

#include "analysis/serving/step_annotation.h"
#include "common/text/text_util.h"

namespace opmap::analysis {

std::string_view RequestKey(std::string_view range_name) {
  if (text::EqualsIgnoreCase(range_name, "request")) return "request";
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
