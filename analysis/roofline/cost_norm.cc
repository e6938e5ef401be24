// Norms, softmax and reductions (docs/metrics.md):
//   layer / group / batch norm  FLOPs 5·N + 6·C, bytes 2·N + 6·C elements (the activations
//                               read and written once; weight, bias and four per-channel
//                               statistics vectors, as TraceLens counts them)
//   rms norm                    FLOPs rows·(2·C + 2) + 2·N, bytes 2·N + C elements
//   softmax / log_softmax       FLOPs 5·N, bytes N in + N out (out at its own dtype)
//   reductions                  FLOPs N_in, bytes N_in + N_out (the reduced shape from the
//                               recorded dim and keepdim; argmax/argmin write int64)
// N = input elements, C = the normalized / channel size.
#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

// The reduced output's element count for dims recorded at `dim_at` (a list or one int;
// absent or empty: a full reduction) and keepdim at `keep_at`.
double ReducedElements(const OpArg& x, const std::vector<OpArg>& args, int dim_at) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::optional<std::vector<int64_t>> dims;
  if (dim_at >= 0 && static_cast<size_t>(dim_at) < args.size()) dims = args[dim_at].ConcreteInts();
  if (!dims || dims->empty()) return 1;
  std::set<int64_t> reduced;
  for (int64_t d : *dims) reduced.insert(d < 0 ? d + rank : d);
  double out = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced.count(i)) out *= static_cast<double>(std::max<int64_t>(x.dims[i], 0));
  }
  return out;  // keepdim only changes the rank, not the element count
}

bool Norm(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  const bool layer = IsOneOf(op, {"aten::layer_norm", "aten::native_layer_norm",
                                  "aten::cudnn_layer_norm", "aten::miopen_layer_norm"});
  const bool channel = IsOneOf(op, {"aten::group_norm", "aten::native_group_norm",
                                    "aten::batch_norm", "aten::native_batch_norm",
                                    "aten::cudnn_batch_norm", "aten::_batch_norm_impl_index",
                                    "aten::instance_norm", "aten::_native_batch_norm_legit",
                                    "aten::_native_batch_norm_legit_no_training"});
  const bool rms = IsOneOf(op, {"aten::rms_norm", "aten::_fused_rms_norm"});
  if (!layer && !channel && !rms) return false;
  c.family = "norm";
  const OpArg* x = TensorAt(args, 0, 1);
  if (x == nullptr) {
    Missing(c, op, "input shape or dtype not recorded");
    return true;
  }
  const double n = x->Numel();
  const int eb = Eb(*x);
  double ch = 0;
  if (layer || rms) {
    auto shape = args.size() > 1 ? args[1].ConcreteInts() : std::nullopt;
    if (shape && !shape->empty()) {
      ch = Product(*shape);
    } else if (const OpArg* w = TensorAt(args, 2, 1)) {
      ch = w->Numel();
    } else {
      ch = static_cast<double>(x->dims.back());
    }
  } else {
    if (x->dims.size() < 2) {
      Missing(c, op, "input has no channel dim");
      return true;
    }
    ch = static_cast<double>(x->dims[1]);
  }
  c.compute_dtype = x->type;
  if (rms) {
    const double rows = ch > 0 ? n / ch : 0;
    const bool affine = TensorAt(args, 2, 1) != nullptr;
    const double flops = rows * (2 * ch + 2) + n * (affine ? 2 : 1);
    const double bytes = (2 * n + (affine ? ch : 0)) * eb;
    Set(c, flops, absl::StrCat("rows·(2C+2) + ", affine ? 2 : 1, "·N, C = ", Num(ch)), bytes,
        absl::StrCat("(2·N", affine ? " + C" : "", ")·", eb, " = ", Num(bytes), " bytes"));
    return true;
  }
  const double flops = 5 * n + 6 * ch;
  const double bytes = (2 * n + 6 * ch) * eb;
  Set(c, flops, absl::StrCat("5·N + 6·C = 5·", Num(n), " + 6·", Num(ch)), bytes,
      absl::StrCat("(2·N + 6·C)·", eb, " = ", Num(bytes), " bytes"));
  return true;
}

bool Softmax(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  if (!IsOneOf(op, {"aten::softmax", "aten::_softmax", "aten::log_softmax",
                    "aten::_log_softmax", "aten::_safe_softmax", "aten::special_softmax"})) {
    return false;
  }
  c.family = "softmax";
  const OpArg* x = TensorAt(args, 0, 1);
  if (x == nullptr) {
    Missing(c, op, "input shape or dtype not recorded");
    return true;
  }
  const double n = x->Numel();
  const int in_eb = Eb(*x);
  int out_eb = in_eb;
  // _softmax(self, dim, half_to_float): True writes fp32.
  if ((op == "aten::_softmax" || op == "aten::_log_softmax") && args.size() > 2 &&
      args[2].ConcreteBool().value_or(false)) {
    out_eb = 4;
  }
  const double bytes = n * (in_eb + out_eb);
  Set(c, 5 * n, absl::StrCat("5 per element · ", Num(n)), bytes,
      absl::StrCat("N·", in_eb, " + N·", out_eb, " = ", Num(bytes), " bytes"));
  c.compute_dtype = x->type;
  return true;
}

bool Reduction(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  int dim_at = 1;
  int out_eb_override = 0;
  bool scan = false, with_indices = false;
  if (IsOneOf(op, {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::prod",
                   "aten::logsumexp", "aten::nansum", "aten::nanmean", "aten::var",
                   "aten::std", "aten::var_mean", "aten::std_mean"})) {
  } else if (IsOneOf(op, {"aten::all", "aten::any"})) {
    out_eb_override = 1;
  } else if (IsOneOf(op, {"aten::argmax", "aten::argmin", "aten::count_nonzero"})) {
    out_eb_override = 8;
  } else if (IsOneOf(op, {"aten::max", "aten::min"})) {
    with_indices = args.size() > 1 && args[1].ConcreteInt().has_value();
    if (args.size() > 1 && args[1].IsTensor()) return false;  // binary max: elementwise
  } else if (IsOneOf(op, {"aten::norm", "aten::linalg_vector_norm", "aten::frobenius_norm"})) {
    dim_at = 2;
  } else if (IsOneOf(op, {"aten::cumsum", "aten::cumprod", "aten::logcumsumexp"})) {
    scan = true;
  } else {
    return false;
  }
  c.family = "reduction";
  const OpArg* x = TensorAt(args, 0);
  if (x == nullptr) {
    Missing(c, op, "input shape or dtype not recorded");
    return true;
  }
  const double n = x->Numel();
  const int eb = Eb(*x);
  const double out_n = scan ? n : ReducedElements(*x, args, dim_at);
  const int out_eb = out_eb_override > 0 ? out_eb_override : eb;
  double bytes = n * eb + out_n * out_eb;
  if (with_indices) bytes += out_n * 8;
  Set(c, n, absl::StrCat("1 per input element · ", Num(n)), bytes,
      absl::StrCat("in ", Num(n), "·", eb, " + out ", Num(out_n), "·", out_eb,
                   with_indices ? " + int64 indices" : "", " = ", Num(bytes), " bytes"));
  c.compute_dtype = x->type;
  return true;
}

}  // namespace

bool NormSoftmaxReduce(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  return Norm(op, args, c) || Softmax(op, args, c) || Reduction(op, args, c);
}

}  // namespace opmap::analysis::cost
