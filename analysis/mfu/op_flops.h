// Model FLOPs of one operator from its input shapes (METRICS.md "MFU"):
//   matmul    2·M·N·K (batched: ×B)   aten::mm, addmm, matmul, bmm, baddbmm, linear
//   conv      2·N·Cout·(Cin/groups)·∏out·∏kernel
//   attention 4·B·H·Sq·Sk·D            aten::scaled_dot_product_attention and its
//             _scaled_dot_product_{flash,efficient,cudnn}_attention, _flash_attention_forward,
//             _efficient_attention_forward. No causal discount: a causal mask halves the
//             work a kernel can do, but the figure counts the full Sq×Sk score matrix.
// Shapes come from Kineto's "Input Dims" text (Range::input_dims). Nested operators
// (aten::linear → aten::addmm, SDPA → _flash_attention_forward) each get FLOPs; a caller
// summing them must count one level only.
#ifndef OPMAP_ANALYSIS_MFU_OP_FLOPS_H_
#define OPMAP_ANALYSIS_MFU_OP_FLOPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

// One argument of "Input Dims": a tensor's dims ([] for scalars, None and empty lists),
// or, for a tensor-list argument ([[2, 3], [4]]), is_list with the list's shapes.
struct ArgDims {
  std::vector<int64_t> dims;
  bool is_list = false;
  std::vector<std::vector<int64_t>> list;
};

// Parses Kineto "Input Dims" text, e.g. `[[16, 128, 512], [512, 512], []]`. Whitespace
// anywhere; integers may be negative (symbolic -1). Errors name the byte offset.
absl::StatusOr<std::vector<ArgDims>> ParseInputDims(std::string_view text);

struct FlopsEstimate {
  std::optional<double> flops;  // nullopt: unavailable, see reason
  std::string reason;           // why unavailable; empty when flops is set
  std::string formula;          // e.g. "2·M·N·K = 2·141·512·512" when flops is set
  // Compulsory traffic in elements: every input read once and the output written once
  // (matmul B·(M·K + K·N + M·N); attention B·H·(2·Sq·D + 2·Sk·D)). Times the element
  // size it is a lower bound on DRAM bytes, so an intensity from it is an upper bound.
  // nullopt where not derived (conv).
  std::optional<double> compulsory_elements;
};

// FLOPs for a named operator from its Input Dims text. Operators outside the table above
// give nullopt with reason "no FLOPs formula for <op>".
FlopsEstimate OpFlopsFromInputDims(std::string_view op_name, std::string_view input_dims);

// Whether OpFlopsFromInputDims has a formula for the operator.
bool HasFlopsFormula(std::string_view op_name);

// The formulas on explicit shapes.
FlopsEstimate MatmulFlops(int64_t batch, int64_t m, int64_t n, int64_t k);
// input [N, Cin, *spatial], weight [Cout, Cin/groups, *kernel], out_spatial the output's
// spatial sizes (Input Dims does not hold stride/padding/dilation, so a caller that knows
// the output shape passes it).
FlopsEstimate ConvFlops(const std::vector<int64_t>& input, const std::vector<int64_t>& weight,
                        const std::vector<int64_t>& out_spatial);
FlopsEstimate AttentionFlops(int64_t batch, int64_t heads, int64_t sq, int64_t sk, int64_t d);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MFU_OP_FLOPS_H_
