// Convolution family (docs/metrics.md): out = ⌊(in + 2·pad − dil·(k−1) − 1)/stride⌋ + 1
// per spatial dim (transposed: (in−1)·stride − 2·pad + dil·(k−1) + output_padding + 1);
// FLOPs 2·N·Cout·(Cin/groups)·∏out·∏kernel (transposed: 2·N·Cin·(Cout/groups)·∏in·∏kernel)
// (+ N·Cout·∏out for a bias); bytes input +
// weight + bias + output. Stride, padding, dilation, transposed, output_padding and groups
// come from Concrete Inputs at the op's own argument positions.
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

struct Positions {
  int bias = -1, stride = -1, padding = -1, dilation = -1, transposed = -1, output_padding = -1,
      groups = -1;
  bool always_transposed = false;
};

bool PositionsOf(absl::string_view op, Positions& p) {
  if (op == "aten::convolution" || op == "aten::_convolution") {
    p = {2, 3, 4, 5, 6, 7, 8, false};
  } else if (op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d") {
    p = {2, 3, 4, 5, -1, -1, 6, false};
  } else if (op == "aten::conv_transpose1d" || op == "aten::conv_transpose2d" ||
             op == "aten::conv_transpose3d") {
    p = {2, 3, 4, 7, -1, 5, 6, true};
  } else if (op == "aten::cudnn_convolution") {
    p = {-1, 3, 2, 4, -1, -1, 5, false};
  } else if (op == "aten::cudnn_convolution_transpose") {
    p = {-1, 4, 2, 5, -1, 3, 6, true};
  } else if (op == "aten::mkldnn_convolution") {
    p = {2, 4, 3, 5, -1, -1, 6, false};
  } else {
    return false;
  }
  return true;
}

// A per-spatial-dim list from Concrete Inputs: "[2, 2]", a single "2" broadcast, or the
// default when not recorded. nullopt when recorded but unreadable.
std::optional<std::vector<int64_t>> SpatialList(const std::vector<OpArg>& args, int at,
                                                size_t rank, int64_t dflt) {
  if (at < 0 || static_cast<size_t>(at) >= args.size() || args[at].concrete.empty()) {
    return std::vector<int64_t>(rank, dflt);
  }
  auto v = args[at].ConcreteInts();
  if (!v) return std::nullopt;
  if (v->size() == 1 && rank > 1) v = std::vector<int64_t>(rank, (*v)[0]);
  if (v->size() != rank) return std::nullopt;
  return v;
}

}  // namespace

bool Conv(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  Positions pos;
  if (!PositionsOf(op, pos)) return false;
  c.family = "conv";
  c.matrix = true;
  const OpArg* x = TensorAt(args, 0, 3);
  const OpArg* w = TensorAt(args, 1, 3);
  if (x == nullptr || w == nullptr || w->dims.size() != x->dims.size()) {
    Missing(c, op, "input/weight shapes or dtypes not recorded");
    return true;
  }
  const size_t rank = x->dims.size() - 2;
  bool any_concrete = false;
  for (const OpArg& a : args) any_concrete |= !a.concrete.empty();
  if (!any_concrete) {
    Missing(c, op, "stride/padding/dilation not recorded (the trace has no Concrete Inputs)");
    return true;
  }
  bool transposed = pos.always_transposed;
  if (pos.transposed >= 0 && static_cast<size_t>(pos.transposed) < args.size()) {
    transposed = args[pos.transposed].ConcreteBool().value_or(false);
  }
  int64_t groups = 1;
  if (pos.groups >= 0 && static_cast<size_t>(pos.groups) < args.size() &&
      !args[pos.groups].concrete.empty()) {
    auto g = args[pos.groups].ConcreteInt();
    if (!g || *g <= 0) {
      Missing(c, op, absl::StrCat("groups '", args[pos.groups].concrete, "' is not an integer"));
      return true;
    }
    groups = *g;
  }
  const bool pad_text = pos.padding >= 0 && static_cast<size_t>(pos.padding) < args.size() &&
                        (args[pos.padding].concrete == "same" || args[pos.padding].concrete == "valid");
  auto stride = SpatialList(args, pos.stride, rank, 1);
  auto dil = SpatialList(args, pos.dilation, rank, 1);
  auto outpad = SpatialList(args, pos.output_padding, rank, 0);
  auto pad = pad_text ? std::optional<std::vector<int64_t>>(std::vector<int64_t>(rank, 0))
                      : SpatialList(args, pos.padding, rank, 0);
  if (!stride || !dil || !outpad || !pad) {
    Missing(c, op, "stride/padding/dilation in Concrete Inputs unreadable");
    return true;
  }
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = x->dims[2 + i], k = w->dims[2 + i];
    const int64_t s = std::max<int64_t>((*stride)[i], 1), d = (*dil)[i], p = (*pad)[i];
    if (pad_text && args[pos.padding].concrete == "same") {
      out[i] = (in + s - 1) / s;
    } else if (transposed) {
      out[i] = (in - 1) * s - 2 * p + d * (k - 1) + (*outpad)[i] + 1;
    } else {
      out[i] = (in + 2 * p - d * (k - 1) - 1) / s + 1;
    }
    if (out[i] <= 0) {
      Missing(c, op, "computed output size is not positive");
      return true;
    }
  }
  const double n = static_cast<double>(x->dims[0]);
  // Normal: weight [Cout, Cin/groups, k...]; transposed: weight [Cin, Cout/groups, k...].
  const double cout = transposed ? static_cast<double>(w->dims[1]) * groups
                                 : static_cast<double>(w->dims[0]);
  const double cin_per_group = transposed ? static_cast<double>(x->dims[1]) / groups
                                          : static_cast<double>(w->dims[1]);
  const double kernel = Product(w->dims, 2);
  const double out_spatial = Product(out);
  double flops = 0;
  std::string formula;
  if (transposed) {
    // Each input element meets every kernel tap of its group's Cout/groups channels.
    const std::vector<int64_t> in(x->dims.begin() + 2, x->dims.end());
    flops = 2.0 * n * static_cast<double>(x->dims[1]) * (cout / groups) * Product(in) * kernel;
    formula = absl::StrCat("2·N·Cin·(Cout/groups)·∏in·∏kernel = 2·", Num(n), "·", x->dims[1],
                           "·", Num(cout / groups), "·∏", Dims(in), "·", Num(kernel));
  } else {
    flops = 2.0 * n * cout * cin_per_group * out_spatial * kernel;
    formula = absl::StrCat("2·N·Cout·(Cin/groups)·∏out·∏kernel = 2·", Num(n), "·", Num(cout),
                           "·", Num(cin_per_group), "·∏", Dims(out), "·", Num(kernel));
  }
  const int eb = Eb(*x);
  const double out_bytes = n * cout * out_spatial * eb;
  double bytes = TensorBytes(*x) + TensorBytes(*w) + out_bytes;
  std::string bytes_formula = absl::StrCat("input + weight + out N·Cout·∏out·", eb);
  const OpArg* bias = pos.bias >= 0 ? TensorAt(args, static_cast<size_t>(pos.bias), 1) : nullptr;
  if (bias != nullptr) {
    flops += n * cout * out_spatial;
    absl::StrAppend(&formula, " + bias N·Cout·∏out");
    bytes += TensorBytes(*bias);
    absl::StrAppend(&bytes_formula, " + bias");
  }
  absl::StrAppend(&formula, " (stride ", Dims(*stride), ", padding ",
                  pad_text ? args[pos.padding].concrete : Dims(*pad), ", dilation ", Dims(*dil),
                  ", groups ", groups, transposed ? ", transposed" : "", ")");
  Set(c, flops, formula, bytes, absl::StrCat(bytes_formula, " = ", Num(bytes), " bytes"));
  c.compute_dtype = x->type;
  return true;
}

}  // namespace opmap::analysis::cost
