// FLOPs, compulsory bytes and the compute path of one operator instance, from what the
// trace recorded of its arguments (docs/metrics.md "FLOPs, bytes and arithmetic intensity
// per operator instance"):
//   - compulsory bytes = every input tensor read once + every output written once, each at
//     its own element size; output shapes follow the op (matmul M×N per batch, elementwise
//     the broadcast shape, copy_ the destination, cat the sum along dim, gathers the
//     gathered rows plus the index tensor, conv from stride/padding/dilation);
//   - executed FLOPs (what the kernels do: causal attention ×½) and model FLOPs (what the
//     model needs: MFU uses these) — equal except for causal attention;
//   - matrix (tensor-core) or vector path and the dtype whose peak applies.
// Families: matmul (mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm), attention (SDPA
// and its flash / efficient / cudnn kernels), conv (1/2/3-d, transposed, grouped),
// elementwise (unary, binary, ternary with broadcasting and scalars; activations), softmax,
// norms (layer, rms, group, batch), reductions, copies (copy_, to, _to_copy, clone,
// contiguous), cat / stack, gathers (index_select, embedding, gather, index), fill / zero,
// and the fused serving ops (vLLM _C::rms_norm, fused_add_rms_norm, rotary_embedding,
// silu_and_mul, fp8 quantisation, aiter norms, SGLang rotary and KV store), and the serving
// ops whose cost needs the trace around them (CostContext): paged attention from its
// step's per-request sums, fused MoE. Anything else says why it has no figure.
#ifndef OPMAP_ANALYSIS_ROOFLINE_OP_COST_H_
#define OPMAP_ANALYSIS_ROOFLINE_OP_COST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/roofline/op_args.h"

namespace opmap::analysis {

struct OpCost {
  std::string family;                 // "matmul", "attention", "conv", "elementwise", ...
  std::optional<double> flops;        // executed FLOPs
  std::optional<double> model_flops;  // model FLOPs (no causal discount)
  std::optional<double> bytes;        // compulsory bytes
  std::string formula;                // FLOPs formula with its numbers
  std::string bytes_formula;          // bytes formula with its numbers
  std::string missing;                // why flops or bytes is absent; "" when both are set
  // Where each figure came from: "formula" (shapes), "NVTX payload", "Nsight Compute
  // (measured)"; "" when the figure is absent.
  std::string flops_source, bytes_source;
  bool matrix = false;                // tensor-core path (matmul, conv, attention)
  std::string compute_dtype;          // the Input type whose peak applies; "" unknown
};

struct StepAnnotation;  // analysis/serving/step_annotation.h

// What the trace around an instance records that its own arguments do not
// (analysis/roofline/range_context.h gathers it from a trace).
struct CostContext {
  // The element size when the trace names none for a tensor list (cat of a TensorList:
  // Kineto writes no dtype), e.g. from the kernel's OpaqueType<N>.
  std::optional<int> element_bytes_hint;
  // The serving step the instance ran in (analysis/serving/step_of_range.h); paged
  // attention is costed from its per-request query/KV-length sums. nullptr: none.
  const StepAnnotation* step = nullptr;
  // A fused MoE: the k of the TopK nested in it (its Concrete Inputs), when recorded.
  std::optional<int64_t> moe_top_k;
  // A fused MoE: the expert weights [E, ·, ·] recorded by operators nested in it, gate/up
  // projection first, then down (range_context.h says how they are found); empty when none.
  std::vector<OpArg> moe_weights;
};

// Whether op's cost reads the CostContext's step or MoE fields (paged attention, fused MoE):
// instances of such an op in different contexts need a cost each.
bool CostReadsTraceContext(std::string_view op);

// `element_bytes_hint`: see CostContext.
OpCost OpCostFor(std::string_view op, const std::vector<OpArg>& args,
                 std::optional<int> element_bytes_hint = std::nullopt);
OpCost OpCostFor(std::string_view op, const std::vector<OpArg>& args,
                 const CostContext& context);

// Convenience: parses the four recorded texts and costs the instance; a parse error
// becomes `missing` naming the field.
OpCost OpCostFromText(std::string_view op, std::string_view input_dims,
                      std::string_view input_types, std::string_view concrete_inputs,
                      std::string_view input_strides,
                      std::optional<int> element_bytes_hint = std::nullopt);

// Cost of one recorded range: the formula from its recorded arguments, with an NVTX
// payload's flops= / bytes= taking precedence (they are the application's own figures).
struct Trace;
struct Range;
OpCost RangeCost(const Trace& trace, const Range& range,
                 std::optional<int> element_bytes_hint = std::nullopt);
OpCost RangeCost(const Trace& trace, const Range& range, const CostContext& context);

// The element size a kernel name states for an untyped copy (at::native::OpaqueType<N>).
std::optional<int> ElementBytesFromKernelName(std::string_view kernel_name);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_ROOFLINE_OP_COST_H_
