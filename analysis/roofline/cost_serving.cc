// Serving ops whose FLOPs and bytes need the trace around the instance (CostContext),
// docs/metrics.md "FLOPs, bytes and arithmetic intensity per operator instance":
//
// Paged attention — vLLM `unified_attention_with_output` / `unified_attention` (q, k, v
// [N, H, d]) and SGLang `attention_paged_attention_ragged` (out, workspace, q [N, H_Q, d],
// k_cache and v_cache [pages, page, H_KV, d], ...) — over the requests of its serving step,
// with the step's per-phase sums (c_ prefill, g_ decode: Σ sq, Σ sk, Σ sq², Σ sq·sk):
//   executed FLOPs = H_Q·(d_qk + d_v)·(2·c_sqsk − c_sqsq + 2·g_sqsk)
//                    (QKᵀ and PV over every query–key pair of each request, less the masked
//                    half of each prefill chunk's own causal block; a decode query attends
//                    to its whole KV)
//   model FLOPs    = H_Q·(d_qk + d_v)·2·(c_sqsk + g_sqsk) (no causal discount, as SDPA's)
//   bytes          = (c_sq + g_sq)·(H_Q + H_KV)·(d_qk + d_v)·e        Q, output, new K and V
//                  + ((c_sk − c_sq) + (g_sk − g_sq))·H_KV·(d_qk + d_v)·e_KV  cached K and V
// e is the query's element size; e_KV the cache's (SGLang's k_cache argument; vLLM records
// no cache argument, so its key's).
//
// Fused MoE (`vllm::moe_forward(hidden [M, H], router_logits [M, E])`) records neither the
// expert weights nor the intermediate size itself; the operators nested in it do (its TopK's
// k, the weight views: range_context.h), and FusedMoe below costs it from them.
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"
#include "analysis/serving/step_annotation.h"

namespace opmap::analysis::cost {

bool IsFusedMoe(absl::string_view op) {
  // Inductor kernels are named after the ops whose buffers they compute
  // (triton_poi_fused_constant_pad_nd_moe_forward_0 pads an MoE's input): not an MoE.
  if (absl::StartsWith(op, "triton_")) return false;
  return absl::StrContains(op, "moe_forward") || absl::StrContains(op, "fused_moe") ||
         absl::StrContains(op, "fused_experts");
}

namespace {

struct PagedLayout {
  int q = -1, k = -1, v = -1;
  bool k_is_cache = false;  // k's dtype is the cache's
};

bool PagedLayoutOf(absl::string_view op, PagedLayout& l) {
  if (op == "vllm::unified_attention_with_output" || op == "vllm::unified_attention") {
    l = {0, 1, 2, false};
    return true;
  }
  if (op == "sglang_profiler::attention_paged_attention_ragged") {
    l = {2, 3, 4, true};
    return true;
  }
  return false;
}

bool PagedAttention(absl::string_view op, const std::vector<OpArg>& args,
                    const CostContext& context, OpCost& c) {
  PagedLayout l;
  if (!PagedLayoutOf(op, l)) return false;
  c.family = "attention";
  c.matrix = true;
  const OpArg* q = TensorAt(args, static_cast<size_t>(l.q), 3);
  const OpArg* k = TensorAt(args, static_cast<size_t>(l.k), 3);
  const OpArg* v = TensorAt(args, static_cast<size_t>(l.v), 3);
  if (q == nullptr || k == nullptr || v == nullptr) {
    Missing(c, op, "query/key/value shapes not recorded");
    return true;
  }
  // The head counts and sizes are the last two dims: [N, H, d] and [pages, page, H, d].
  const double h_q = static_cast<double>(q->dims[q->dims.size() - 2]);
  const double h_kv = static_cast<double>(k->dims[k->dims.size() - 2]);
  const int64_t d_qk = q->dims.back(), d_v = v->dims.back();
  c.compute_dtype = q->type;
  if (h_q <= 0 || h_kv <= 0 || d_qk <= 0 || d_v <= 0) {
    Missing(c, op, "non-positive head count or size");
    return true;
  }
  const StepAnnotation* step = context.step;
  if (step == nullptr) {
    Missing(c, op,
            "no serving step annotation encloses it: its FLOPs and bytes need the step's "
            "per-request query and KV lengths, which the recorded shapes do not hold");
    return true;
  }
  if (!HasAttentionSums(*step)) {
    Missing(c, op,
            absl::StrCat("its step `", step->verbatim,
                         "` does not carry the per-request sums (Σ sq, Σ sk, Σ sq², Σ sq·sk per "
                         "phase: TraceLens' detailed step annotation writes them)"));
    return true;
  }
  const StepPhaseSums& p = step->prefill;
  const StepPhaseSums& g = step->decode;
  const double sq = static_cast<double>(p.query_tokens + g.query_tokens);
  if (sq <= 0) {
    Missing(c, op, absl::StrCat("its step `", step->verbatim, "` runs no query tokens"));
    return true;
  }
  const double d = static_cast<double>(d_qk + d_v);
  const double pairs = 2.0 * p.query_kv - p.query_sq + 2.0 * g.query_kv;
  const double executed = h_q * d * pairs;
  const double model = h_q * d * 2.0 * (p.query_kv + g.query_kv);
  const int e = Eb(*q);
  const int e_kv = Eb(*k);
  const double cached =
      static_cast<double>((p.kv_tokens - p.query_tokens) + (g.kv_tokens - g.query_tokens));
  const double bytes = sq * (h_q + h_kv) * d * e + cached * h_kv * d * e_kv;
  Set(c, executed,
      absl::StrCat("H_Q·(d_qk+d_v)·(2·c_sqsk − c_sqsq + 2·g_sqsk) = ", Num(h_q), "·(", d_qk, "+",
                   d_v, ")·(2·", p.query_kv, " − ", p.query_sq, " + 2·", g.query_kv,
                   ") (step `", step->verbatim, "`)"),
      bytes,
      absl::StrCat("(c_sq+g_sq)·(H_Q+H_KV)·(d_qk+d_v)·", e, " + ((c_sk−c_sq)+(g_sk−g_sq))·H_KV·",
                   "(d_qk+d_v)·", e_kv, " = ", Num(sq), "·", Num(h_q + h_kv), "·", Num(d), "·",
                   e, " + ", Num(cached), "·", Num(h_kv), "·", Num(d), "·", e_kv,
                   l.k_is_cache ? " (KV at the cache's dtype)" : " (KV at the key's dtype)",
                   " = ", Num(bytes), " bytes"));
  c.model_flops = model;
  return true;
}

// The intermediate size and gating that the two expert weights [E, ·, ·] state, checked
// against the hidden size H. A weight stored one byte per element may pack two 4-bit values
// (mxfp4) along its reduction dim: the gate/up weight holds H/p and N_up = (1 or 2)·I, the
// down weight H and I/p. p = 1 is tried first; nullopt when neither fits.
struct MoeSizes {
  int64_t intermediate = 0;
  bool gated = false;
  int packing = 1;
};
std::optional<MoeSizes> SolveMoe(const OpArg& up, const OpArg& down, int64_t hidden) {
  for (int p : {1, 2}) {
    if (p == 2 && (Eb(up) != 1 || Eb(down) != 1 || hidden % 2 != 0)) break;
    const int64_t k_up = hidden / p;
    int64_t n_up = -1, i = -1;
    if (up.dims[1] == k_up) {
      n_up = up.dims[2];
    } else if (up.dims[2] == k_up) {
      n_up = up.dims[1];
    }
    if (down.dims[2] == hidden) {
      i = down.dims[1] * p;
    } else if (down.dims[1] == hidden) {
      i = down.dims[2] * p;
    }
    if (n_up <= 0 || i <= 0 || (n_up != i && n_up != 2 * i)) continue;
    return MoeSizes{i, n_up == 2 * i, p};
  }
  return std::nullopt;
}

// vllm::moe_forward(hidden [M, H], router_logits [M, E]) with the context's top-k and
// expert weights, as TraceLens' unfused MoE up + down projections:
//   FLOPs = 2·M·k·H·I·(2 if gated else 1) + 2·M·k·I·H
//   bytes = 2·M·H·e + 2·M·k·I·e + E_active·(W_up + W_down),
//   E_active = E·(1 − ((E − k)/E)^M) (uniform routing), W = one expert's recorded weight bytes.
bool FusedMoe(absl::string_view op, const std::vector<OpArg>& args, const CostContext& context,
              OpCost& c) {
  if (!IsFusedMoe(op)) return false;
  c.family = "moe";
  c.matrix = true;
  const OpArg* x = TensorAt(args, 0, 2);
  const OpArg* logits = TensorAt(args, 1, 2);
  if (op != "vllm::moe_forward" || x == nullptr || logits == nullptr) {
    Missing(c, op, "the expert weights and routing are not in its recorded shapes (pass NVTX "
                   "flops=/bytes= or --ncu for this operator)");
    return true;
  }
  c.compute_dtype = x->type;
  const int64_t m = x->dims[0], h = x->dims.back(), e = logits->dims.back();
  const std::string known = absl::StrCat(
      " (recorded: ", m, " tokens, hidden size ", h, ", ", e, " experts",
      context.moe_top_k ? absl::StrCat(", top-k ", *context.moe_top_k, " from its TopK") : "",
      ")");
  if (!context.moe_top_k || context.moe_weights.size() < 2) {
    std::string what;
    if (context.moe_weights.size() < 2) what = "the expert weights, and so the intermediate size,";
    if (!context.moe_top_k) {
      absl::StrAppend(&what, what.empty() ? "" : " and ", "the top-k (no TopK)");
    }
    Missing(c, op,
            absl::StrCat(what, " are not recorded in or under it", known,
                         context.moe_weights.size() < 2
                             ? "; a graph replay keeps only the captured operators that launched "
                               "kernels, not the weight views nested in them"
                             : ""));
    return true;
  }
  const OpArg& up = context.moe_weights[0];
  const OpArg& down = context.moe_weights[1];
  const std::optional<MoeSizes> sizes = SolveMoe(up, down, h);
  if (!sizes || m <= 0 || e <= 0 || *context.moe_top_k > e) {
    Missing(c, op, absl::StrCat("the nested expert weights ", Dims(up.dims), " and ",
                                Dims(down.dims), " do not fit hidden size ", h, known));
    return true;
  }
  const double md = static_cast<double>(m), hd = static_cast<double>(h);
  const double k = static_cast<double>(*context.moe_top_k), ed = static_cast<double>(e);
  const double i = static_cast<double>(sizes->intermediate);
  const double gate = sizes->gated ? 2 : 1;
  const double flops = 2 * md * k * hd * i * gate + 2 * md * k * i * hd;
  const double active = ed * (1 - std::pow((ed - k) / ed, md));
  const double w_up = up.Numel() / ed * Eb(up), w_down = down.Numel() / ed * Eb(down);
  const int eb = Eb(*x);
  const double activations = 2 * md * hd * eb + 2 * md * k * i * eb;
  const double bytes = activations + active * (w_up + w_down);
  Set(c, flops,
      absl::StrCat("2·M·k·H·I·", sizes->gated ? "2 (gated)" : "1", " + 2·M·k·I·H, M ", m, ", k ",
                   *context.moe_top_k, ", H ", h, ", I ", sizes->intermediate,
                   " (from the nested weights ", Dims(up.dims), " and ", Dims(down.dims),
                   sizes->packing == 2 ? ", two 4-bit values per byte" : "", ")"),
      bytes,
      absl::StrCat("hidden in+out, intermediate out+in ", Num(activations), " + E_active ",
                   Num(active), " of ", e, " experts × (", Num(w_up), " + ", Num(w_down),
                   ") weight bytes = ", Num(bytes), " bytes"));
  return true;
}

}  // namespace

bool Serving(absl::string_view op, const std::vector<OpArg>& args, const CostContext& context,
             OpCost& c) {
  return PagedAttention(op, args, context, c) || FusedMoe(op, args, context, c);
}

}  // namespace opmap::analysis::cost

namespace opmap::analysis {

bool CostReadsTraceContext(std::string_view op_in) {
  const absl::string_view op(op_in.data(), op_in.size());
  cost::PagedLayout l;
  return cost::PagedLayoutOf(op, l) || cost::IsFusedMoe(op);
}

}  // namespace opmap::analysis
