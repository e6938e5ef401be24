// The CostContext (op_cost.h) of a recorded range: what the trace around it records that its
// own arguments do not — the serving step it ran in (analysis/serving/step_of_range.h) and,
// for a fused MoE (vllm::moe_forward(hidden [M, H], router_logits [M, E])), what the
// operators nested in it record:
//   - top-k: the k of the first nested TopK (Concrete Inputs[1]: vLLM's gpt-oss router);
//   - the expert weights: the first two distinct tensors of rank 3 whose first dim is E,
//     each the first tensor argument of a nested operator, in start order — the gate/up
//     projection's, then the down projection's (vLLM's triton matmul_ogs path views them as
//     [E, K, N] before each GEMM; cost_serving.cc checks them against H before use).
// Built once per trace; the callers that cost ranges (analysis/bottleneck's mapping sheet)
// ask it per range.
//
// Example:
//   RangeContexts contexts(trace);
//   CostContext context = contexts.For(range_index);
//   context.element_bytes_hint = ...;  // e.g. from its kernel's OpaqueType<N>
//   OpCost cost = RangeCost(trace, trace.ranges[range_index], context);
//
// Thread safety: immutable after construction; the trace must outlive it and not change.
#ifndef OPMAP_ANALYSIS_ROOFLINE_RANGE_CONTEXT_H_
#define OPMAP_ANALYSIS_ROOFLINE_RANGE_CONTEXT_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/model/trace.h"
#include "analysis/roofline/op_cost.h"
#include "analysis/serving/step_of_range.h"

namespace opmap::analysis {

class RangeContexts {
 public:
  explicit RangeContexts(const Trace& trace);

  // The context of trace.ranges[range]; element_bytes_hint is left for the caller. The step
  // pointer is valid as long as this object.
  CostContext For(int32_t range) const;

  const StepOfRange& steps() const { return steps_; }

 private:
  const Trace& trace_;
  StepOfRange steps_;
  // (process, thread) → its operator ranges, by start time.
  std::map<std::pair<int64_t, int64_t>, std::vector<int32_t>> cpu_ops_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_ROOFLINE_RANGE_CONTEXT_H_
