#include "analysis/mfu/op_flops.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace opmap::analysis {
namespace {

// Minimal recursive-descent reader for nested integer lists.
struct Node {
  bool is_int = false;
  int64_t value = 0;
  std::vector<Node> items;
};

class Reader {
 public:
  explicit Reader(absl::string_view t) : t_(t) {}
  absl::StatusOr<Node> ParseTop() {
    auto n = Parse(0);
    if (!n.ok()) return n;
    Skip();
    if (p_ != t_.size()) return Err("trailing text");
    return n;
  }

 private:
  absl::Status Err(absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input Dims: ", what, " at byte ", p_, " of '", t_, "'"));
  }
  void Skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  absl::StatusOr<Node> Parse(int depth) {
    if (depth > 8) return Err("nesting too deep");
    Skip();
    if (p_ >= t_.size()) return Err("unexpected end");
    Node n;
    if (t_[p_] == '[') {
      ++p_;
      Skip();
      if (p_ < t_.size() && t_[p_] == ']') {
        ++p_;
        return n;
      }
      while (true) {
        auto item = Parse(depth + 1);
        if (!item.ok()) return item.status();
        n.items.push_back(*std::move(item));
        Skip();
        if (p_ >= t_.size()) return Err("unexpected end, expected ',' or ']'");
        if (t_[p_] == ',') {
          ++p_;
          continue;
        }
        if (t_[p_] == ']') {
          ++p_;
          return n;
        }
        return Err("expected ',' or ']'");
      }
    }
    size_t start = p_;
    if (t_[p_] == '-' || t_[p_] == '+') ++p_;
    while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_]))) ++p_;
    int64_t v = 0;
    if (!absl::SimpleAtoi(t_.substr(start, p_ - start), &v)) {
      p_ = start;
      return Err("expected an integer or '['");
    }
    n.is_int = true;
    n.value = v;
    return n;
  }
  absl::string_view t_;
  size_t p_ = 0;
};

FlopsEstimate Unavailable(std::string reason) {
  FlopsEstimate f;
  f.reason = std::move(reason);
  return f;
}

bool AllPositive(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x <= 0) return false;
  }
  return true;
}

double Product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  double p = 1;
  for (size_t i = begin; i < end; ++i) p *= static_cast<double>(v[i]);
  return p;
}

std::string Dims(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

// The tensor argument at `i`, or nullptr when absent / a list / no dims.
const std::vector<int64_t>* Tensor(const std::vector<ArgDims>& args, size_t i) {
  if (i >= args.size() || args[i].is_list || args[i].dims.empty()) return nullptr;
  return &args[i].dims;
}

FlopsEstimate Missing(absl::string_view op, absl::string_view what) {
  return Unavailable(absl::StrCat(op, ": shapes missing (", what, ")"));
}

// a [..., M, K] @ b [..., K, N] with broadcast batch dims; 1-D operands per torch.matmul.
FlopsEstimate MatmulGeneral(absl::string_view op, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() == 1 && b.size() == 1) {
    if (a[0] != b[0]) return Unavailable(absl::StrCat(op, ": K mismatch ", Dims(a), " · ", Dims(b)));
    return MatmulFlops(1, 1, 1, a[0]);
  }
  bool squeeze_a = a.size() == 1, squeeze_b = b.size() == 1;
  if (squeeze_a) a.insert(a.begin(), 1);
  if (squeeze_b) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], n = b.back();
  if (k != k2) return Unavailable(absl::StrCat(op, ": K mismatch ", Dims(a), " @ ", Dims(b)));
  // Broadcast leading dims.
  const size_t la = a.size() - 2, lb = b.size() - 2, l = std::max(la, lb);
  double batch = 1;
  for (size_t i = 0; i < l; ++i) {
    int64_t da = i < l - la ? 1 : a[i - (l - la)];
    int64_t db = i < l - lb ? 1 : b[i - (l - lb)];
    if (da != db && da != 1 && db != 1) {
      return Unavailable(absl::StrCat(op, ": batch dims do not broadcast ", Dims(a), " @ ", Dims(b)));
    }
    batch *= static_cast<double>(std::max(da, db));
  }
  FlopsEstimate f = MatmulFlops(1, m, n, k);
  if (f.flops) {
    *f.flops *= batch;
    if (batch != 1) f.formula = absl::StrCat(f.formula, " ×B=", batch);
  }
  return f;
}

bool IsAttentionBhsd(absl::string_view op) {
  return op == "aten::scaled_dot_product_attention" ||
         op == "aten::_scaled_dot_product_flash_attention" ||
         op == "aten::_scaled_dot_product_efficient_attention" ||
         op == "aten::_scaled_dot_product_cudnn_attention" ||
         op == "aten::_scaled_dot_product_flash_attention_for_cpu";
}
bool IsAttentionBshd(absl::string_view op) {
  return op == "aten::_flash_attention_forward" || op == "aten::_efficient_attention_forward";
}
bool IsConv(absl::string_view op) {
  return op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d" ||
         op == "aten::convolution" || op == "aten::_convolution" ||
         op == "aten::cudnn_convolution" || op == "aten::mkldnn_convolution";
}

}  // namespace

absl::StatusOr<std::vector<ArgDims>> ParseInputDimsImpl(absl::string_view text) {
  Reader r(text);
  auto top = r.ParseTop();
  if (!top.ok()) return top.status();
  if (top->is_int) return absl::InvalidArgumentError("Input Dims: expected a list of arguments");
  std::vector<ArgDims> out;
  for (const Node& arg : top->items) {
    ArgDims a;
    if (arg.is_int) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input Dims: argument ", out.size(), " is a bare integer"));
    }
    bool ints = true, lists = true;
    for (const Node& x : arg.items) {
      ints &= x.is_int;
      lists &= !x.is_int;
    }
    if (!arg.items.empty() && ints) {
      for (const Node& x : arg.items) a.dims.push_back(x.value);
    } else if (!arg.items.empty() && lists) {
      a.is_list = true;
      for (const Node& t : arg.items) {
        std::vector<int64_t> d;
        for (const Node& x : t.items) {
          if (!x.is_int) {
            return absl::InvalidArgumentError(
                absl::StrCat("Input Dims: argument ", out.size(), " nests too deep"));
          }
          d.push_back(x.value);
        }
        a.list.push_back(std::move(d));
      }
    } else if (!arg.items.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input Dims: argument ", out.size(), " mixes integers and lists"));
    }
    out.push_back(std::move(a));
  }
  return out;
}

bool HasFlopsFormulaImpl(absl::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::matmul" || op == "aten::bmm" ||
         op == "aten::baddbmm" || op == "aten::linear" || IsConv(op) || IsAttentionBhsd(op) ||
         IsAttentionBshd(op);
}

FlopsEstimate MatmulFlops(int64_t batch, int64_t m, int64_t n, int64_t k) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) {
    return Unavailable(absl::StrCat("matmul: non-positive size (B=", batch, " M=", m, " N=", n,
                                    " K=", k, ")"));
  }
  FlopsEstimate f;
  f.flops = 2.0 * batch * static_cast<double>(m) * n * k;
  f.compulsory_elements = static_cast<double>(batch) *
                          (static_cast<double>(m) * k + static_cast<double>(k) * n +
                           static_cast<double>(m) * n);
  f.formula = batch == 1 ? absl::StrCat("2·M·N·K = 2·", m, "·", n, "·", k)
                         : absl::StrCat("2·B·M·N·K = 2·", batch, "·", m, "·", n, "·", k);
  return f;
}

FlopsEstimate ConvFlops(const std::vector<int64_t>& input, const std::vector<int64_t>& weight,
                        const std::vector<int64_t>& out_spatial) {
  if (input.size() < 3 || weight.size() != input.size() ||
      out_spatial.size() != input.size() - 2) {
    return Unavailable(absl::StrCat("conv: shapes do not fit input ", Dims(input), " weight ",
                                    Dims(weight), " out spatial ", Dims(out_spatial)));
  }
  if (!AllPositive(input) || !AllPositive(weight) || !AllPositive(out_spatial)) {
    return Unavailable("conv: non-positive size");
  }
  if (input[1] % weight[1] != 0) {
    return Unavailable(absl::StrCat("conv: Cin ", input[1], " not a multiple of weight's ",
                                    weight[1], " (Cin/groups)"));
  }
  FlopsEstimate f;
  // 2·N·Cout·(Cin/groups)·∏out·∏kernel; weight[1] is Cin/groups.
  f.flops = 2.0 * input[0] * weight[0] * weight[1] * Product(out_spatial, 0, out_spatial.size()) *
            Product(weight, 2, weight.size());
  f.formula = absl::StrCat("2·N·Cout·(Cin/groups)·∏out·∏kernel = 2·", input[0], "·", weight[0],
                           "·", weight[1], "·∏", Dims(out_spatial), "·∏",
                           Dims(std::vector<int64_t>(weight.begin() + 2, weight.end())));
  return f;
}

FlopsEstimate AttentionFlops(int64_t b, int64_t h, int64_t sq, int64_t sk, int64_t d) {
  if (b <= 0 || h <= 0 || sq <= 0 || sk <= 0 || d <= 0) {
    return Unavailable("attention: non-positive size");
  }
  FlopsEstimate f;
  // QK^T (2·Sq·Sk·D) + PV (2·Sq·Sk·D) per batch and head; no causal discount.
  f.flops = 4.0 * b * static_cast<double>(h) * sq * sk * d;
  f.compulsory_elements = static_cast<double>(b) * h * (2.0 * sq * d + 2.0 * sk * d);
  f.formula = absl::StrCat("4·B·H·Sq·Sk·D = 4·", b, "·", h, "·", sq, "·", sk, "·", d,
                           " (no causal discount)");
  return f;
}

FlopsEstimate OpFlopsImpl(absl::string_view op, absl::string_view input_dims) {
  if (!HasFlopsFormulaImpl(op)) return Unavailable(absl::StrCat("no FLOPs formula for ", op));
  if (input_dims.empty()) return Missing(op, "no Input Dims recorded");
  auto parsed = ParseInputDimsImpl(input_dims);
  if (!parsed.ok()) return Unavailable(std::string(parsed.status().message()));
  const std::vector<ArgDims>& args = *parsed;

  if (op == "aten::mm") {
    auto *a = Tensor(args, 0), *b = Tensor(args, 1);
    if (!a || !b || a->size() != 2 || b->size() != 2) return Missing(op, "need [M,K] and [K,N]");
    return MatmulGeneral(op, *a, *b);
  }
  if (op == "aten::addmm") {
    auto *a = Tensor(args, 1), *b = Tensor(args, 2);
    if (!a || !b || a->size() != 2 || b->size() != 2) {
      return Missing(op, "need bias, [M,K] and [K,N]");
    }
    return MatmulGeneral(op, *a, *b);
  }
  if (op == "aten::bmm" || op == "aten::baddbmm") {
    const size_t first = op == "aten::bmm" ? 0 : 1;
    auto *a = Tensor(args, first), *b = Tensor(args, first + 1);
    if (!a || !b || a->size() != 3 || b->size() != 3) return Missing(op, "need [B,M,K] and [B,K,N]");
    if ((*a)[0] != (*b)[0]) return Unavailable(absl::StrCat(op, ": batch mismatch"));
    return MatmulGeneral(op, *a, *b);
  }
  if (op == "aten::matmul") {
    auto *a = Tensor(args, 0), *b = Tensor(args, 1);
    if (!a || !b) return Missing(op, "need two tensors");
    return MatmulGeneral(op, *a, *b);
  }
  if (op == "aten::linear") {
    auto *x = Tensor(args, 0), *w = Tensor(args, 1);
    if (!x || !w || w->size() != 2) return Missing(op, "need input [...,K] and weight [N,K]");
    const int64_t k = x->back(), n = (*w)[0];
    if ((*w)[1] != k) {
      return Unavailable(absl::StrCat(op, ": K mismatch input ", Dims(*x), " weight ", Dims(*w)));
    }
    const double rows = Product(*x, 0, x->size() - 1);
    FlopsEstimate f = MatmulFlops(1, static_cast<int64_t>(rows), n, k);
    if (f.flops) f.formula = absl::StrCat(f.formula, " (M = ∏", Dims(*x), "[:-1])");
    return f;
  }
  if (IsConv(op)) {
    auto *x = Tensor(args, 0), *w = Tensor(args, 1);
    if (!x || !w) return Missing(op, "need input and weight");
    return Unavailable(absl::StrCat(
        op, ": output size needs stride/padding/dilation, which Input Dims does not record"));
  }
  if (IsAttentionBhsd(op) || IsAttentionBshd(op)) {
    auto *q = Tensor(args, 0), *k = Tensor(args, 1);
    if (!q || !k) return Missing(op, "need query and key");
    if (IsAttentionBshd(op)) {
      // [B, S, H, D]; 3-D is the varlen form (cu_seqlens), sequence lengths unknown.
      if (q->size() != 4 || k->size() != 4) {
        return Missing(op, "need query/key [B,S,H,D] (varlen form not supported)");
      }
      return AttentionFlops((*q)[0], (*q)[2], (*q)[1], (*k)[1], (*q)[3]);
    }
    // [..., H, S, D] (SDPA accepts any leading dims; their product is B·H).
    if (q->size() < 3 || k->size() != q->size()) return Missing(op, "need query/key [B,H,S,D]");
    const size_t r = q->size();
    const double bh = Product(*q, 0, r - 2);
    const int64_t heads = r >= 4 ? (*q)[r - 3] : 1;
    const int64_t batch = static_cast<int64_t>(bh / heads);
    return AttentionFlops(batch, heads, (*q)[r - 2], (*k)[r - 2], (*q)[r - 1]);
  }
  return Unavailable(absl::StrCat("no FLOPs formula for ", op));
}

absl::StatusOr<std::vector<ArgDims>> ParseInputDims(std::string_view text) {
  return ParseInputDimsImpl(absl::string_view(text.data(), text.size()));
}
bool HasFlopsFormula(std::string_view op) {
  return HasFlopsFormulaImpl(absl::string_view(op.data(), op.size()));
}
FlopsEstimate OpFlopsFromInputDims(std::string_view op, std::string_view input_dims) {
  return OpFlopsImpl(absl::string_view(op.data(), op.size()),
                     absl::string_view(input_dims.data(), input_dims.size()));
}

}  // namespace opmap::analysis
