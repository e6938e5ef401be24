// Model FLOPs of one operator from its input shapes, for MFU (docs/metrics.md "MFU"): the
// roofline's per-instance cost (analysis/roofline/op_cost.h) read for its model FLOPs —
// matmul 2·M·N·K (×B), conv from Concrete Inputs, attention 4·B·H·Sq·Sk·D with no causal
// discount. Nested operators (aten::linear → aten::addmm) each get FLOPs; a caller summing
// them must count one level only.
#ifndef OPMAP_ANALYSIS_MFU_OP_FLOPS_H_
#define OPMAP_ANALYSIS_MFU_OP_FLOPS_H_

#include <optional>
#include <string>
#include <string_view>

#include "analysis/roofline/input_dims.h"
#include "analysis/roofline/op_cost.h"

namespace opmap::analysis {

struct FlopsEstimate {
  std::optional<double> flops;  // model FLOPs; nullopt: unavailable, see reason
  std::string reason;           // why unavailable; empty when flops is set
  std::string formula;          // e.g. "2·M·N·K = 2·141·512·512" when flops is set
};

// The MFU view of an instance's cost: its model FLOPs.
FlopsEstimate ModelFlops(const OpCost& cost);

// FLOPs from Input Dims alone (no dtypes or concrete inputs: conv then says why not).
FlopsEstimate OpFlopsFromInputDims(std::string_view op_name, std::string_view input_dims);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MFU_OP_FLOPS_H_
