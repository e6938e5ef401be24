#include "analysis/mfu/op_flops.h"

namespace opmap::analysis {

FlopsEstimate ModelFlops(const OpCost& cost) {
  FlopsEstimate f;
  if (cost.model_flops) {
    f.flops = cost.model_flops;
    f.formula = cost.formula;
  } else {
    f.reason = cost.missing.empty() ? "no FLOPs figure" : cost.missing;
  }
  return f;
}

FlopsEstimate OpFlopsFromInputDims(std::string_view op, std::string_view input_dims) {
  return ModelFlops(OpCostFromText(op, input_dims, "", "", ""));
}

}  // namespace opmap::analysis
