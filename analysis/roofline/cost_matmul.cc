// Matmul family (docs/metrics.md): FLOPs 2·M·N·K per batch (+ M·N per batch for a bias),
// bytes A + B + bias + the M×N output of every batch, each at its own element size.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

struct Gemm {
  double batch = 1;
  int64_t m = 0, n = 0, k = 0;
};

// a [..., M, K] @ b [..., K, N] with broadcast batch dims; 1-D operands as torch.matmul.
bool MatmulShape(std::vector<int64_t> a, std::vector<int64_t> b, Gemm& g, std::string& why) {
  if (a.empty() || b.empty()) {
    why = "a 0-dim operand";
    return false;
  }
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  g.m = a[a.size() - 2];
  g.k = a.back();
  g.n = b.back();
  if (b[b.size() - 2] != g.k) {
    why = absl::StrCat("K mismatch ", Dims(a), " @ ", Dims(b));
    return false;
  }
  std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto batch = Broadcast({ba, bb});
  if (!batch) {
    why = absl::StrCat("batch dims do not broadcast ", Dims(a), " @ ", Dims(b));
    return false;
  }
  g.batch = Product(*batch);
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) {
    why = "non-positive size";
    return false;
  }
  return true;
}

// Costs A @ B (+ bias) with the output at out_bytes per element.
void CostGemm(absl::string_view op, const Gemm& g, const OpArg& a, const OpArg& b,
              const OpArg* bias, int out_bytes, OpCost& c) {
  const double mn = static_cast<double>(g.m) * g.n;
  double flops = 2.0 * g.batch * mn * g.k;
  std::string formula = g.batch == 1
                            ? absl::StrCat("2·M·N·K = 2·", g.m, "·", g.n, "·", g.k)
                            : absl::StrCat("2·B·M·N·K = 2·", Num(g.batch), "·", g.m, "·", g.n,
                                           "·", g.k);
  const double a_bytes = TensorBytes(a), b_bytes = TensorBytes(b);
  const double out = g.batch * mn * out_bytes;
  double bytes = a_bytes + b_bytes + out;
  std::string bytes_formula =
      absl::StrCat("A ", Num(a_bytes), " + B ", Num(b_bytes), " + out B·M·N·", out_bytes, " = ",
                   Num(out));
  if (bias != nullptr) {
    flops += g.batch * mn;
    absl::StrAppend(&formula, " + bias B·M·N");
    const double bias_bytes = TensorBytes(*bias);
    bytes += bias_bytes;
    absl::StrAppend(&bytes_formula, " + bias ", Num(bias_bytes));
  }
  Set(c, flops, formula, bytes, absl::StrCat(bytes_formula, " bytes"));
  c.compute_dtype = a.type;
  (void)op;
}

bool IsMatmulOp(absl::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::matmul" || op == "aten::linear" || op == "aten::_scaled_mm" ||
         op == "aten::addbmm";
}

}  // namespace

bool Matmul(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  if (!IsMatmulOp(op)) return false;
  c.family = "matmul";
  c.matrix = true;
  // Operand positions: (a, b) and an optional bias position.
  size_t ia = 0, ib = 1;
  int bias_at = -1;
  if (op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm") {
    ia = 1;
    ib = 2;
    bias_at = 0;
  } else if (op == "aten::linear") {
    bias_at = 2;
  } else if (op == "aten::_scaled_mm") {
    bias_at = 4;  // (a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)
  }
  const OpArg* a = TensorAt(args, ia, 1);
  const OpArg* b = TensorAt(args, ib, 1);
  if (a == nullptr || b == nullptr) {
    Missing(c, op, "operand shapes or dtypes not recorded");
    return true;
  }
  const OpArg* bias = bias_at >= 0 ? TensorAt(args, static_cast<size_t>(bias_at), 1) : nullptr;
  std::vector<int64_t> bdims = b->dims;
  if (op == "aten::linear") {
    // weight [N, K]: x @ weightᵀ.
    if (bdims.size() != 2) {
      Missing(c, op, "weight is not [N, K]");
      return true;
    }
    std::swap(bdims[0], bdims[1]);
  }
  Gemm g;
  std::string why;
  if (!MatmulShape(a->dims, bdims, g, why)) {
    Missing(c, op, why);
    return true;
  }
  if (op == "aten::addbmm") {
    // Σ over the batch into one M×N output: the FLOPs are batched, the output is not.
    CostGemm(op, g, *a, *b, bias, Eb(*a), c);
    *c.bytes -= (g.batch - 1) * static_cast<double>(g.m) * g.n * Eb(*a);
    if (bias != nullptr) *c.flops -= (g.batch - 1) * static_cast<double>(g.m) * g.n;
    c.model_flops = c.flops;
    return true;
  }
  // The output has the operands' dtype; fp8 GEMMs (_scaled_mm) write bf16 unless a bias
  // says otherwise (Kineto does not record out_dtype).
  int out_bytes = Eb(*a);
  const bool fp8_out_assumed = op == "aten::_scaled_mm" && out_bytes == 1;
  if (fp8_out_assumed) out_bytes = bias != nullptr ? bias->ElementBytes().value_or(2) : 2;
  CostGemm(op, g, *a, *b, bias, out_bytes, c);
  if (fp8_out_assumed) absl::StrAppend(&c.bytes_formula, " (output taken as bf16: out_dtype is not recorded)");
  return true;
}

}  // namespace opmap::analysis::cost
