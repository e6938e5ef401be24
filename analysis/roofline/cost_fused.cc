// Fused serving ops (vLLM `_C::`, SGLang `sgl_kernel::`, AMD `aiter::`), from their recorded
// shapes (docs/metrics.md):
//   rms_norm(out, in, w)                 as aten::rms_norm: rows·(2C+2) + 2N FLOPs,
//                                        bytes in + out + weight (aiter::rmsnorm the same,
//                                        aiter::rms_norm(in, w))
//   fused_add_rms_norm(in, res, w)       + N adds; in and residual read and written
//                                        (aiter::rmsnorm2d_fwd_with_add_ck and add_rmsnorm:
//                                        (out, in, res_in, res_out, w))
//   rotary_embedding(pos, q, k, hs,      3 FLOPs per rotated element; q and k read and
//                    cache, neox)        written, positions and the gathered cache rows read
//   silu_and_mul(out, in)                5 FLOPs per output element (gelu variants 9);
//                                        in [.., 2d] read, out [.., d] written
//   *_fp8_quant(out, in, scale, ...)     2 FLOPs per element (dynamic: 3, the max pass);
//                                        in read, fp8 out written, scales
// Fused MoE is cost_serving.cc's.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

double Sum(std::initializer_list<const OpArg*> args) {
  double s = 0;
  for (const OpArg* a : args) {
    if (a != nullptr) s += TensorBytes(*a);
  }
  return s;
}

}  // namespace

bool FusedServing(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  const bool rms = IsOneOf(op, {"_C::rms_norm", "sgl_kernel::rmsnorm", "vllm::rms_norm",
                                "aiter::rmsnorm", "aiter::rms_norm"});
  const bool add_rms = IsOneOf(op, {"_C::fused_add_rms_norm", "sgl_kernel::fused_add_rmsnorm",
                                "vllm::fused_add_rms_norm", "aiter::rmsnorm2d_fwd_with_add_ck",
                                "aiter::add_rmsnorm"});
  const bool rotary = IsOneOf(op, {"_C::rotary_embedding", "vllm::rotary_embedding",
                                   "sgl_kernel::rotary_embedding"});
  const bool act = IsOneOf(op, {"_C::silu_and_mul", "sgl_kernel::silu_and_mul", "_C::gelu_and_mul",
                            "_C::gelu_tanh_and_mul", "sgl_kernel::gelu_and_mul",
                            "sgl_kernel::gelu_tanh_and_mul"});
  const bool quant = absl::StartsWith(op, "_C::") && absl::EndsWith(op, "fp8_quant");
  if (!rms && !add_rms && !rotary && !act && !quant) return false;
  c.family = rotary ? "rotary" : quant ? "quantize" : act ? "elementwise" : "norm";
  if (rms || add_rms) {
    // _C::rms_norm(out, input, weight, eps); fused_add_rms_norm(input, residual, weight, eps);
    // aiter::rms_norm(input, weight, eps, ...); aiter's add forms (out, input, residual_in,
    // residual_out, weight, eps, ...).
    size_t x_at = rms ? 1 : 0, w_at = 2;
    if (op == "aiter::rms_norm") {
      x_at = 0;
      w_at = 1;
    } else if (op == "aiter::rmsnorm2d_fwd_with_add_ck" || op == "aiter::add_rmsnorm") {
      x_at = 1;
      w_at = 4;
    }
    const OpArg* x = TensorAt(args, x_at, 1);
    const OpArg* w = TensorAt(args, w_at, 1);
    if (x == nullptr || w == nullptr) {
      Missing(c, op, "input / weight shapes not recorded");
      return true;
    }
    const double n = x->Numel(), ch = w->Numel(), rows = ch > 0 ? n / ch : 0;
    const int eb = Eb(*x);
    double flops = rows * (2 * ch + 2) + 2 * n;
    double bytes = (2 * n + ch) * eb;
    std::string what = "rows·(2C+2) + 2·N";
    if (add_rms) {
      flops += n;
      bytes += 2 * n * eb;
      what = "N + rows·(2C+2) + 2·N";
    }
    Set(c, flops, absl::StrCat(what, ", C = ", Num(ch)), bytes,
        absl::StrCat(add_rms ? "(4·N + C)·" : "(2·N + C)·", eb, " = ", Num(bytes), " bytes"));
    c.compute_dtype = x->type;
    return true;
  }
  if (rotary) {
    const OpArg* pos = TensorAt(args, 0, 1);
    const OpArg* q = TensorAt(args, 1, 1);
    const OpArg* k = TensorAt(args, 2, 1);
    const OpArg* cache = TensorAt(args, 4, 2);
    const auto head = args.size() > 3 ? args[3].ConcreteInt() : std::nullopt;
    if (pos == nullptr || q == nullptr || cache == nullptr || !head || *head <= 0) {
      Missing(c, op, "positions, query, head_size or cos/sin cache not recorded");
      return true;
    }
    const double rot = static_cast<double>(cache->dims[1]);
    const double elems = (q->Numel() + (k ? k->Numel() : 0)) * rot / *head;
    const double qk = Sum({q, k});
    const double gathered = pos->Numel() * rot * Eb(*cache);
    const double bytes = 2 * qk + TensorBytes(*pos) + gathered;
    Set(c, 3 * elems, absl::StrCat("3 per rotated element · ", Num(elems)), bytes,
        absl::StrCat("q,k read+written ", Num(2 * qk), " + positions + cache rows ",
                     Num(gathered), " = ", Num(bytes), " bytes"));
    c.compute_dtype = q->type;
    return true;
  }
  if (act) {
    const OpArg* out = TensorAt(args, 0, 1);
    const OpArg* in = TensorAt(args, 1, 1);
    if (out == nullptr || in == nullptr) {
      Missing(c, op, "out / input shapes not recorded");
      return true;
    }
    const double per = absl::StrContains(op, "gelu") ? 9 : 5;
    const double bytes = Sum({in, out});
    Set(c, per * out->Numel(), absl::StrCat(Num(per), " per output element · ", Num(out->Numel())),
        bytes, absl::StrCat("in + out = ", Num(bytes), " bytes"));
    c.compute_dtype = in->type;
    return true;
  }
  // fp8 quantisation: (out, input, scale[, scale_ub]).
  const OpArg* out = TensorAt(args, 0, 1);
  const OpArg* in = TensorAt(args, 1, 1);
  if (out == nullptr || in == nullptr) {
    Missing(c, op, "out / input shapes not recorded");
    return true;
  }
  const double per = absl::StrContains(op, "dynamic") ? 3 : 2;
  const OpArg* scale = TensorAt(args, 2);
  const double bytes = Sum({in, out, scale});
  Set(c, per * in->Numel(), absl::StrCat(Num(per), " per element · ", Num(in->Numel())), bytes,
      absl::StrCat("in + fp8 out + scales = ", Num(bytes), " bytes"));
  c.compute_dtype = in->type;
  return true;
}

}  // namespace opmap::analysis::cost
