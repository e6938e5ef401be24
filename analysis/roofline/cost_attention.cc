// Attention family (docs/metrics.md): model FLOPs 2·B·H·Sq·Sk·(D_qk + D_v) (= 4·B·H·Sq·Sk·D);
// executed FLOPs half of that when causal (flash kernels skip the masked blocks); bytes
// Q + K + V read once and the output (Sq × D_v per query head) written once.
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

struct Layout {
  bool bshd = false;  // [B, S, H, D] (flash / efficient forward) instead of [B, H, S, D]
  int causal_at = -1;
  bool causal_is_mask_type = false;  // _efficient_attention_forward: custom_mask_type ≠ 0
};

bool LayoutOf(absl::string_view op, Layout& l) {
  if (op == "aten::scaled_dot_product_attention") {
    l.causal_at = 5;
  } else if (op == "aten::_scaled_dot_product_flash_attention" ||
             op == "aten::_scaled_dot_product_flash_attention_for_cpu") {
    l.causal_at = 4;
  } else if (op == "aten::_scaled_dot_product_efficient_attention" ||
             op == "aten::_scaled_dot_product_cudnn_attention") {
    l.causal_at = 6;
  } else if (op == "aten::_flash_attention_forward") {
    l.bshd = true;
    l.causal_at = 8;
  } else if (op == "aten::_efficient_attention_forward") {
    l.bshd = true;
    l.causal_at = 9;
    l.causal_is_mask_type = true;
  } else if (op == "flash_attn::_flash_attn_forward" || op == "FlashAttnFunc") {
    l.bshd = true;
    l.causal_at = 5;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool Attention(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  // Paged attention (vLLM unified attention, SGLang paged_attention_ragged) is costed from
  // its serving step in cost_serving.cc.
  Layout l;
  if (!LayoutOf(op, l)) return false;
  c.family = "attention";
  c.matrix = true;
  const OpArg* q = TensorAt(args, 0, 3);
  const OpArg* k = TensorAt(args, 1, 3);
  const OpArg* v = TensorAt(args, 2, 3);
  if (q == nullptr || k == nullptr || v == nullptr) {
    Missing(c, op, "query/key/value shapes or dtypes not recorded (3-D varlen form has no "
                   "sequence lengths)");
    return true;
  }
  const size_t r = q->dims.size();
  if (k->dims.size() != r || v->dims.size() != r || (l.bshd && r != 4)) {
    Missing(c, op, "query/key/value ranks differ");
    return true;
  }
  double bh = 0;
  int64_t sq = 0, sk = 0;
  const int64_t d_qk = q->dims[r - 1], d_v = v->dims[r - 1];
  if (l.bshd) {
    bh = static_cast<double>(q->dims[0]) * q->dims[2];
    sq = q->dims[1];
    sk = k->dims[1];
  } else {
    bh = Product(q->dims, 0, r - 2);  // any leading dims: their product is B·H
    sq = q->dims[r - 2];
    sk = k->dims[r - 2];
  }
  if (bh <= 0 || sq <= 0 || sk <= 0 || d_qk <= 0 || d_v <= 0) {
    Missing(c, op, "non-positive size");
    return true;
  }
  bool causal = false;
  if (l.causal_at >= 0 && static_cast<size_t>(l.causal_at) < args.size()) {
    const OpArg& a = args[static_cast<size_t>(l.causal_at)];
    if (l.causal_is_mask_type) {
      causal = a.ConcreteInt().value_or(0) != 0;
    } else {
      causal = a.ConcreteBool().value_or(false);
    }
  }
  const double model = 2.0 * bh * sq * sk * static_cast<double>(d_qk + d_v);
  const double executed = causal ? model / 2 : model;
  const int eb = Eb(*q);
  const double out = bh * sq * d_v * eb;
  const double bytes = TensorBytes(*q) + TensorBytes(*k) + TensorBytes(*v) + out;
  std::string formula = absl::StrCat("2·B·H·Sq·Sk·(D_qk+D_v) = 2·", Num(bh), "·", sq, "·", sk,
                                     "·(", d_qk, "+", d_v, ")");
  if (causal) absl::StrAppend(&formula, " ×½ executed (causal; model FLOPs undiscounted)");
  Set(c, executed, formula, bytes,
      absl::StrCat("Q + K + V + out (B·H·Sq·D_v·", eb, ") = ", Num(bytes), " bytes"));
  c.model_flops = model;
  c.compute_dtype = q->type;
  return true;
}

}  // namespace opmap::analysis::cost
