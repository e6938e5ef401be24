// Elementwise family (docs/metrics.md): the output has the broadcast shape of the tensor
// inputs; bytes = every tensor input (a 0-dim tensor is one element at its dtype; a Python
// scalar is none) + the output; FLOPs = a per-element constant × output elements (1, gelu
// 8). Comparisons and logical ops write bool. Copies read the source and write the
// destination at their own dtypes; fill / zero only write.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

enum class Kind { kMap, kCompare, kCopy, kToDtype, kFill };

struct EwOp {
  Kind kind;
  double flops_per_element;
};

const absl::flat_hash_map<absl::string_view, EwOp>& Table() {
  static const auto* t = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, EwOp>;
    for (absl::string_view n :
         {"neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
          "sin", "cos", "tan", "tanh", "sigmoid", "relu", "relu6", "silu", "erf", "erfinv",
          "reciprocal", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "clamp",
          "clamp_min", "clamp_max", "clip", "hardtanh", "hardswish", "hardsigmoid", "leaky_relu",
          "elu", "selu", "celu", "softplus", "mish", "bitwise_not", "nan_to_num", "pow",
          "threshold", "triu", "tril", "square", "add", "sub", "rsub", "mul", "div",
          "true_divide", "floor_divide", "remainder", "fmod", "maximum", "minimum", "fmax",
          "fmin", "atan2", "hypot", "xlogy", "copysign", "bitwise_and", "bitwise_or",
          "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "__and__", "__or__",
          "__xor__", "__lshift__", "__rshift__", "sigmoid_backward", "threshold_backward",
          "silu_backward", "tanh_backward", "where", "addcmul", "addcdiv", "lerp",
          "masked_fill", "masked_scatter", "logit", "glu"}) {
      (*m)[n] = {Kind::kMap, 1};
    }
    (*m)["gelu"] = {Kind::kMap, 8};
    (*m)["gelu_backward"] = {Kind::kMap, 8};
    for (absl::string_view n : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                               "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
                               "isneginf", "isposinf", "signbit"}) {
      (*m)[n] = {Kind::kCompare, 1};
    }
    for (absl::string_view n : {"copy_", "copy", "clone", "contiguous", "_copy_from"}) {
      (*m)[n] = {Kind::kCopy, 1};
    }
    for (absl::string_view n : {"to", "_to_copy", "type_as"}) (*m)[n] = {Kind::kToDtype, 1};
    for (absl::string_view n : {"fill_", "zero_", "fill", "zeros_like", "ones_like", "full_like",
                               "normal_", "uniform_", "random_", "bernoulli_"}) {
      (*m)[n] = {Kind::kFill, 0};
    }
    return m;
  }();
  return *t;
}

// c10::ScalarType codes as Concrete Inputs write a dtype argument.
std::optional<int> ScalarTypeBytes(int64_t code) {
  switch (code) {
    case 0: case 1: case 11: case 12: case 13: case 23: case 24: case 25: case 26: return 1;
    case 2: case 5: case 15: return 2;
    case 3: case 6: case 8: case 14: return 4;
    case 4: case 7: case 9: return 8;
    case 10: return 16;
    default: return std::nullopt;
  }
}

absl::string_view Base(absl::string_view op) {
  absl::string_view n(op.data(), op.size());
  absl::ConsumePrefix(&n, "aten::");
  return {n.data(), n.size()};
}

}  // namespace

bool Elementwise(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  const absl::string_view base = Base(op);
  if (base.size() == op.size()) return false;  // ATen ops only
  auto it = Table().find(base);
  bool inplace = false;
  if (it == Table().end() && absl::EndsWith(base, "_")) {
    it = Table().find(base.substr(0, base.size() - 1));  // add_, mul_, relu_ ...
    inplace = true;
  }
  if (it == Table().end()) return false;
  const EwOp e = it->second;
  c.family = e.kind == Kind::kCopy || e.kind == Kind::kToDtype ? "copy"
             : e.kind == Kind::kFill                           ? "fill"
                                                               : "elementwise";
  c.matrix = false;
  const OpArg* self = TensorAt(args, 0);
  if (self == nullptr) {
    Missing(c, op, "first tensor's shape or dtype not recorded");
    return true;
  }
  const int self_eb = Eb(*self);
  const double n = self->Numel();
  if (e.kind == Kind::kFill) {
    Set(c, 0, "0 (writes only)", n * self_eb,
        absl::StrCat("out ", Num(n), "·", self_eb, " bytes"));
    c.compute_dtype = self->type;
    return true;
  }
  if (e.kind == Kind::kCopy || e.kind == Kind::kToDtype) {
    // copy_(dst, src): the destination decides the dtype; clone/contiguous/to: self is the
    // source and the output keeps its dtype unless a dtype code says otherwise.
    int src_eb = self_eb, dst_eb = self_eb;
    double src_n = n;
    std::string dst_type = self->type;
    if (base == "copy_" || base == "copy" || base == "_copy_from") {
      if (const OpArg* src = TensorAt(args, 1)) {
        src_eb = Eb(*src);
        src_n = src->Numel();
      }
    } else if (e.kind == Kind::kToDtype && args.size() > 1) {
      if (auto code = args[1].ConcreteInt(); code && ScalarTypeBytes(*code)) {
        dst_eb = *ScalarTypeBytes(*code);
      }
    }
    const double bytes = src_n * src_eb + n * dst_eb;
    Set(c, n, absl::StrCat("1 per element · ", Num(n)), bytes,
        absl::StrCat("read ", Num(src_n), "·", src_eb, " + write ", Num(n), "·", dst_eb, " = ",
                     Num(bytes), " bytes"));
    c.compute_dtype = dst_type;
    c.model_flops = 0;  // a copy is an instruction per element but no model math (MFU)
    return true;
  }
  // Map / compare: every tensor input read once, the broadcast output written once.
  std::vector<std::vector<int64_t>> shapes;
  double in_bytes = 0;
  int out_eb = 0, first_eb = self_eb;
  std::string out_type = self->type;
  for (const OpArg& a : args) {
    if (!a.IsTensor()) continue;
    in_bytes += TensorBytes(a);
    shapes.push_back(a.dims);
    // The output dtype follows the dimensioned inputs (a 0-dim tensor does not promote);
    // a bool mask (where, masked_fill) does not set it.
    if (!a.dims.empty() && a.type != "bool" && Eb(a) > out_eb) {
      out_eb = Eb(a);
      out_type = a.type;
    }
  }
  if (out_eb == 0) out_eb = first_eb;
  auto out_shape = Broadcast(shapes);
  if (!out_shape) {
    Missing(c, op, "input shapes do not broadcast");
    return true;
  }
  if (inplace) out_shape = self->dims;
  const double out_n = Product(*out_shape);
  if (e.kind == Kind::kCompare) out_eb = 1;
  const double bytes = in_bytes + out_n * out_eb;
  Set(c, e.flops_per_element * out_n,
      absl::StrCat(Num(e.flops_per_element), " per output element · ", Num(out_n)), bytes,
      absl::StrCat("inputs ", Num(in_bytes), " + out ", Dims(*out_shape), "·", out_eb, " = ",
                   Num(bytes), " bytes"));
  c.compute_dtype = e.kind == Kind::kCompare ? self->type : out_type;
  return true;
}

}  // namespace opmap::analysis::cost
