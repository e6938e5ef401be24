#include "analysis/roofline/op_cost.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/model/trace.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis {
namespace cost {

bool IsOneOf(absl::string_view op, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

double Product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  double p = 1;
  for (size_t i = begin; i < std::min(end, v.size()); ++i) {
    p *= static_cast<double>(std::max<int64_t>(v[i], 0));
  }
  return p;
}

std::string Dims(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

const OpArg* TensorAt(const std::vector<OpArg>& args, size_t i, size_t min_rank) {
  if (i >= args.size() || !args[i].IsTensor() || args[i].dims.size() < min_rank) return nullptr;
  return &args[i];
}

int Eb(const OpArg& a) { return a.ElementBytes().value_or(0); }

double TensorBytes(const OpArg& a) { return a.is_list ? 0 : a.Numel() * Eb(a); }

std::optional<std::vector<int64_t>> Broadcast(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = s[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      return std::nullopt;
    }
  }
  return out;
}

void Missing(OpCost& c, absl::string_view op, absl::string_view why) {
  c.flops.reset();
  c.model_flops.reset();
  c.bytes.reset();
  c.flops_source.clear();
  c.bytes_source.clear();
  c.missing = absl::StrCat(op, ": ", why);
}

void Set(OpCost& c, double flops, std::string formula, double bytes, std::string bytes_formula) {
  c.flops = flops;
  c.model_flops = flops;
  c.flops_source = "formula";
  c.bytes_source = "formula";
  c.bytes = bytes;
  c.formula = std::move(formula);
  c.bytes_formula = std::move(bytes_formula);
  c.missing.clear();
}

std::string Num(double v) { return absl::StrFormat("%.6g", v); }

}  // namespace cost

std::optional<int> ElementBytesFromKernelName(std::string_view name_in) {
  const absl::string_view name(name_in.data(), name_in.size());
  constexpr absl::string_view kOpaque = "OpaqueType<";
  const size_t at = name.find(kOpaque);
  if (at == absl::string_view::npos) return std::nullopt;
  const char* begin = name.data() + at + kOpaque.size();
  int v = 0;
  auto [p, ec] = std::from_chars(begin, name.data() + name.size(), v);
  if (ec != std::errc() || p == begin || v <= 0 || v > 16) return std::nullopt;
  return v;
}

OpCost OpCostFor(std::string_view op_in, const std::vector<OpArg>& args,
                 std::optional<int> element_bytes_hint) {
  CostContext context;
  context.element_bytes_hint = element_bytes_hint;
  return OpCostFor(op_in, args, context);
}

OpCost OpCostFor(std::string_view op_in, const std::vector<OpArg>& args,
                 const CostContext& context) {
  const absl::string_view op(op_in.data(), op_in.size());
  OpCost c;
  if (cost::Serving(op, args, context, c) || cost::Matmul(op, args, c) ||
      cost::Attention(op, args, c) || cost::Conv(op, args, c) ||
      cost::NormSoftmaxReduce(op, args, c) || cost::FusedServing(op, args, c) ||
      cost::Inductor(op, args, c) || cost::Communication(op, args, c) ||
      cost::DataMovement(op, args, context.element_bytes_hint, c) ||
      cost::Elementwise(op, args, c)) {
    // Bytes need every tensor's element size; shapes alone still give FLOPs.
    for (const OpArg& a : args) {
      if (a.IsTensor() && !a.ElementBytes() && c.bytes) {
        c.bytes.reset();
        c.bytes_formula.clear();
        c.bytes_source.clear();
        c.missing = absl::StrCat(op, ": tensor dtypes not recorded (no Input type), so no bytes");
      }
    }
    return c;
  }
  c.family = "unmodelled";
  c.missing = absl::StrCat("no FLOPs/bytes formula for ", op);
  return c;
}

namespace {

OpCost CostFromText(std::string_view op_in, std::string_view input_dims,
                    std::string_view input_types, std::string_view concrete_inputs,
                    std::string_view input_strides, const CostContext& context) {
  const absl::string_view op(op_in.data(), op_in.size());
  auto args = ParseOpArgs(input_dims, input_types, concrete_inputs, input_strides);
  if (!args.ok()) {
    OpCost c;
    c.family = "unparsed";
    c.missing = absl::StrCat(op, ": ", args.status().message());
    return c;
  }
  if (input_dims.empty()) {
    OpCost c = OpCostFor(op_in, *args, context);
    if (c.family != "unmodelled") cost::Missing(c, op, "no Input Dims recorded");
    return c;
  }
  return OpCostFor(op_in, *args, context);
}

}  // namespace

OpCost OpCostFromText(std::string_view op_in, std::string_view input_dims,
                      std::string_view input_types, std::string_view concrete_inputs,
                      std::string_view input_strides, std::optional<int> element_bytes_hint) {
  CostContext context;
  context.element_bytes_hint = element_bytes_hint;
  return CostFromText(op_in, input_dims, input_types, concrete_inputs, input_strides, context);
}

OpCost RangeCost(const Trace& trace, const Range& range, std::optional<int> element_bytes_hint) {
  CostContext context;
  context.element_bytes_hint = element_bytes_hint;
  return RangeCost(trace, range, context);
}

OpCost RangeCost(const Trace& trace, const Range& range, const CostContext& context) {
  OpCost c = CostFromText(trace.strings.Get(range.name), trace.strings.Get(range.input_dims),
                          trace.strings.Get(range.input_types),
                          trace.strings.Get(range.concrete_inputs),
                          trace.strings.Get(range.input_strides), context);
  if (range.flops != kNone) {
    c.flops = static_cast<double>(range.flops);
    c.model_flops = c.flops;
    c.formula = absl::StrCat("NVTX payload flops=", range.flops);
    c.flops_source = "NVTX payload";
  }
  if (range.bytes != kNone) {
    c.bytes = static_cast<double>(range.bytes);
    c.bytes_formula = absl::StrCat("NVTX payload bytes=", range.bytes);
    c.bytes_source = "NVTX payload";
  }
  if (c.flops && c.bytes) c.missing.clear();
  return c;
}

}  // namespace opmap::analysis
