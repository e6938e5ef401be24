// Request and step ranges: the host ranges that are a workload's requests or iterations
// — the subjects of per-request latency — and never a kernel's operator, layer type or
// module (docs/metrics.md, "Serving step annotations").
//
// A range is a request range when its name is `request` or `iteration` (ASCII case
// ignored), starts with `ProfilerStep#` (PyTorch profiler steps), or is a serving step
// annotation (step_annotation.h: vLLM `execute_...`, SGLang `step[...]`). Its key — what
// `opmap query latency --subject request` groups by — is the name lowercased for the first
// two ("Request" → "request"), `ProfilerStep` for the third, and `step:<phase>` for serving
// steps (`step:prefill`, `step:decode`, `step:mixed`, `step` when the annotation gives no
// phase). The mapper also treats a user annotation that encloses a graph launch as a step
// (kernel_mapper.h); that one needs the launch calls, so it is not a name rule.
#ifndef OPMAP_ANALYSIS_SERVING_REQUEST_KEY_H_
#define OPMAP_ANALYSIS_SERVING_REQUEST_KEY_H_

#include <string_view>

namespace opmap::analysis {

// The request key of a range name, or "" when the name does not make a request range.
std::string_view RequestKey(std::string_view range_name);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SERVING_REQUEST_KEY_H_
