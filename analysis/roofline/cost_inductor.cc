// torch.compile's Inductor kernels, recorded as operators named after the Triton kernel
// they run, with the kernel's arguments as Input Dims (docs/metrics.md, roofline inputs):
//   triton_poi_*  pointwise over an iteration space of N = xnumel elements, the kernel's
//                 last Scalar argument (Concrete Inputs). FLOPs = N (one per element, the
//                 elementwise convention; model FLOPs 0 when the kernel only converts or
//                 copies: `_to_copy`, `clone`, `copy`). Bytes = Σ over tensor arguments
//                 of numel · element size: each argument, no larger than the space, is
//                 read or written once (a smaller one is broadcast: read once).
// Not costed, with the reason: an xnumel Inductor specialised into the kernel (nothing
// recorded says N), or an argument larger than N — a gather source (an embedding table,
// a cos/sin cache) of which the rows read are not recorded. Reductions (triton_red_*,
// triton_per_*) are not modelled.
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

// "triton_poi_fused__to_copy_1" → "_to_copy": the fused ATen ops, the kernel index dropped.
absl::string_view FusedOps(absl::string_view op) {
  absl::string_view n = op;
  absl::ConsumePrefix(&n, "triton_poi_");
  absl::ConsumePrefix(&n, "fused_");
  const size_t last = n.rfind('_');
  int64_t index = 0;
  if (last != absl::string_view::npos && absl::SimpleAtoi(n.substr(last + 1), &index)) {
    n = n.substr(0, last);
  }
  return n;
}

}  // namespace

bool Inductor(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  if (!absl::StartsWith(op, "triton_poi_")) return false;
  c.family = "elementwise";
  c.matrix = false;
  std::optional<int64_t> xnumel;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->type == "Scalar") {
      xnumel = it->ConcreteInt();
      break;
    }
  }
  if (!xnumel || *xnumel <= 0) {
    Missing(c, op, "the kernel's element count (xnumel) is not recorded (no Scalar argument)");
    return true;
  }
  const double n = static_cast<double>(*xnumel);
  double bytes = 0;
  double widest = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const OpArg& a = args[i];
    if (!a.IsTensor()) continue;
    if (a.Numel() > n) {
      Missing(c, op,
              absl::StrCat("argument ", i, " ", Dims(a.dims), " is larger than the kernel's ",
                           Num(n), " elements: a gather, whose rows read are not recorded"));
      return true;
    }
    bytes += a.Numel() * Eb(a);
    if (a.Numel() >= widest) {
      widest = a.Numel();
      c.compute_dtype = a.type;
    }
  }
  Set(c, n, absl::StrCat("1 per element · xnumel ", Num(n)), bytes,
      absl::StrCat("Σ tensor arguments numel · element size = ", Num(bytes), " bytes"));
  const absl::string_view fused = FusedOps(op);
  if (fused == "_to_copy" || fused == "clone" || fused == "copy") c.model_flops = 0;
  return true;
}

}  // namespace opmap::analysis::cost
