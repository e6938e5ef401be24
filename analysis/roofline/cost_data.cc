// Data movement (docs/metrics.md): no arithmetic, so FLOPs 0 (upsampling 1 per output
// element); bytes = what is read + what is written:
//   cat / stack              every input read, the concatenation written
//   index_select / embedding gathered rows read and written + the index tensor
//   / gather
//   scatter / index_put_     the source rows read and written + the index tensor
//   upsample, pad, repeat,   input + output (output shape from Concrete Inputs)
//   flip, roll
//   topk / sort              input + values + int64 indices
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
namespace {

void Movement(OpCost& c, double flops, double read, double written, std::string what) {
  Set(c, flops, flops == 0 ? "0 (data movement)" : absl::StrCat("1 per output element · ", Num(flops)),
      read + written,
      absl::StrCat(what, ": read ", Num(read), " + write ", Num(written), " bytes"));
}

std::optional<int64_t> DimAt(const std::vector<OpArg>& args, size_t at, size_t rank) {
  if (at >= args.size()) return 0;
  auto d = args[at].ConcreteInt();
  if (!d) return args[at].concrete.empty() ? std::optional<int64_t>(0) : std::nullopt;
  int64_t v = *d < 0 ? *d + static_cast<int64_t>(rank) : *d;
  if (v < 0 || v >= static_cast<int64_t>(std::max<size_t>(rank, 1))) return std::nullopt;
  return v;
}

bool Concat(absl::string_view base, const std::vector<OpArg>& args, std::optional<int> hint,
            OpCost& c) {
  c.family = "cat";
  if (args.empty() || !args[0].is_list || args[0].list.empty()) {
    Missing(c, base, "the input tensor list's shapes were not recorded");
    return true;
  }
  std::optional<int> eb = args[0].ElementBytes();  // TensorList: Kineto names no dtype
  if (!eb) eb = hint;
  if (!eb) {
    Missing(c, base, "the inputs' dtype is not recorded (TensorList) and no kernel names it");
    return true;
  }
  double in = 0;
  for (const auto& s : args[0].list) in += Product(s);
  // cat writes Σ inputs along dim; stack writes the same elements with a new dim.
  Movement(c, 0, in * *eb, in * *eb, absl::StrCat(args[0].list.size(), " inputs ·", *eb));
  return true;
}

}  // namespace

bool DataMovement(absl::string_view op, const std::vector<OpArg>& args,
                  std::optional<int> hint, OpCost& c) {
  absl::string_view b(op.data(), op.size());
  if (!absl::ConsumePrefix(&b, "aten::")) return false;
  const absl::string_view base(b.data(), b.size());
  if (base == "cat" || base == "stack" || base == "_cat" || base == "concat" ||
      base == "hstack" || base == "vstack") {
    return Concat(op, args, hint, c);
  }
  const bool gather_rows = base == "index_select" || base == "embedding" || base == "gather";
  const bool scatter = base == "scatter" || base == "scatter_" || base == "scatter_add" ||
                       base == "scatter_add_" || base == "index_put_" || base == "index_put" ||
                       base == "index_add_" || base == "index_copy_";
  const bool upsample = base.rfind("upsample_", 0) == 0;
  const bool same_shape = base == "flip" || base == "roll" || base == "repeat_interleave";
  const bool topk = base == "topk" || base == "sort" || base == "argsort";
  const bool pad = base == "constant_pad_nd" || base == "pad" || base == "reflection_pad2d" ||
                   base == "replication_pad2d";
  const bool repeat = base == "repeat";
  const bool index = base == "index";
  if (!gather_rows && !scatter && !upsample && !same_shape && !topk && !pad && !repeat && !index) {
    return false;
  }
  c.family = gather_rows || index ? "gather" : scatter ? "scatter" : "data movement";
  const OpArg* self = TensorAt(args, 0);
  if (self == nullptr) {
    Missing(c, op, "first tensor's shape or dtype not recorded");
    return true;
  }
  c.compute_dtype = self->type;
  const int eb = Eb(*self);
  const size_t rank = self->dims.size();
  if (base == "embedding") {
    const OpArg* idx = TensorAt(args, 1);
    if (idx == nullptr || rank != 2) {
      Missing(c, op, "weight [V, D] and indices not recorded");
      return true;
    }
    const double rows = idx->Numel() * self->dims[1] * eb;
    Movement(c, 0, rows + TensorBytes(*idx), rows, "gathered rows + indices");
    return true;
  }
  if (gather_rows) {
    // index_select(self, dim, index) / gather(self, dim, index).
    const OpArg* idx = TensorAt(args, 2);
    auto dim = DimAt(args, 1, rank);
    if (idx == nullptr || !dim) {
      Missing(c, op, "index tensor or dim not recorded");
      return true;
    }
    double out = 0;
    if (base == "gather") {
      out = idx->Numel() * eb;
    } else {
      out = eb * idx->Numel();
      for (size_t i = 0; i < rank; ++i) {
        if (static_cast<int64_t>(i) != *dim) out *= static_cast<double>(self->dims[i]);
      }
    }
    Movement(c, 0, out + TensorBytes(*idx), out, "gathered rows + index");
    return true;
  }
  if (index) {
    Missing(c, op, "the index tensors are not recorded (Input Dims holds only self)");
    return true;
  }
  if (scatter) {
    // scatter(self, dim, index, src) / index_put_(self, indices, values).
    const OpArg* src = base.rfind("index_put", 0) == 0 ? TensorAt(args, 2) : TensorAt(args, 3);
    const OpArg* idx = base.rfind("index_put", 0) == 0 ? nullptr : TensorAt(args, 2);
    if (src == nullptr) {
      Missing(c, op, "source tensor not recorded");
      return true;
    }
    const double moved = TensorBytes(*src);
    Movement(c, 0, moved + (idx ? TensorBytes(*idx) : 0), moved, "source rows + index");
    return true;
  }
  const double in = TensorBytes(*self);
  if (upsample) {
    auto size = args.size() > 1 ? args[1].ConcreteInts() : std::nullopt;
    if (!size || size->empty() || rank < 2 || size->size() != rank - 2) {
      Missing(c, op, "output_size not recorded");
      return true;
    }
    const double out_n = static_cast<double>(self->dims[0]) * self->dims[1] * Product(*size);
    Movement(c, out_n, in, out_n * eb, absl::StrCat("upsample to ", Dims(*size)));
    return true;
  }
  if (same_shape) {
    Movement(c, 0, in, in, std::string(base));
    return true;
  }
  if (repeat || pad) {
    auto v = args.size() > 1 ? args[1].ConcreteInts() : std::nullopt;
    if (!v) {
      Missing(c, op, repeat ? "repeats not recorded" : "pad not recorded");
      return true;
    }
    std::vector<int64_t> out = self->dims;
    if (repeat) {
      if (v->size() < out.size()) {
        Missing(c, op, "fewer repeats than dims");
        return true;
      }
      out.insert(out.begin(), v->size() - out.size(), 1);
      for (size_t i = 0; i < out.size(); ++i) out[i] *= (*v)[i];
    } else {
      // pad pairs apply to the last dims first.
      for (size_t p = 0; p + 1 < v->size() && p / 2 < out.size(); p += 2) {
        out[out.size() - 1 - p / 2] += (*v)[p] + (*v)[p + 1];
      }
    }
    Movement(c, 0, in, Product(out) * eb, absl::StrCat(base, " to ", Dims(out)));
    return true;
  }
  // topk(self, k, dim, ...) / sort(self, dim, ...) / argsort(self, dim, ...).
  double out_n = self->Numel();
  if (base == "topk") {
    auto k = args.size() > 1 ? args[1].ConcreteInt() : std::nullopt;
    auto dim = DimAt(args, 2, rank);
    if (!k || !dim || rank == 0) {
      Missing(c, op, "k or dim not recorded");
      return true;
    }
    out_n = out_n / std::max<int64_t>(self->dims[*dim], 1) * *k;
  }
  const double written = out_n * (base == "argsort" ? 8 : eb + 8);
  Movement(c, 0, in, written, absl::StrCat(base, ": values + int64 indices"));
  return true;
}

}  // namespace opmap::analysis::cost
