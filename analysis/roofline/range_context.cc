#include "analysis/roofline/range_context.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/string_view.h"
#include "analysis/roofline/cost_internal.h"
#include "analysis/roofline/op_args.h"

namespace opmap::analysis {
namespace {

constexpr std::string_view kTopK = "TopK";
constexpr size_t kMoeWeights = 2;  // gate/up, down

std::vector<OpArg> ArgsOf(const Trace& trace, const Range& r) {
  auto args = ParseOpArgs(trace.strings.Get(r.input_dims), trace.strings.Get(r.input_types),
                          trace.strings.Get(r.concrete_inputs), "");
  return args.ok() ? *std::move(args) : std::vector<OpArg>{};
}

}  // namespace

RangeContexts::RangeContexts(const Trace& trace) : trace_(trace), steps_(trace) {
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    if (r.kind == RangeKind::kCpuOp) cpu_ops_[{r.process, r.thread}].push_back(static_cast<int32_t>(i));
  }
  for (auto& [key, v] : cpu_ops_) {
    std::stable_sort(v.begin(), v.end(), [&](int32_t a, int32_t b) {
      return trace.ranges[a].start_ns < trace.ranges[b].start_ns;
    });
  }
}

CostContext RangeContexts::For(int32_t range) const {
  CostContext context;
  if (range < 0 || static_cast<size_t>(range) >= trace_.ranges.size()) return context;
  context.step = steps_.StepFor(range);
  const Range& r = trace_.ranges[range];
  const std::string_view name = trace_.strings.Get(r.name);
  if (!cost::IsFusedMoe(absl::string_view(name.data(), name.size()))) return context;
  auto thread = cpu_ops_.find({r.process, r.thread});
  if (thread == cpu_ops_.end()) return context;
  const std::vector<OpArg> own = ArgsOf(trace_, r);
  const int64_t experts =
      own.size() > 1 && own[1].IsTensor() && own[1].dims.size() == 2 ? own[1].dims[1] : -1;
  const std::vector<int32_t>& v = thread->second;
  auto pos = std::lower_bound(v.begin(), v.end(), r.start_ns, [&](int32_t i, int64_t t) {
    return trace_.ranges[i].start_ns < t;
  });
  for (; pos != v.end() && trace_.ranges[*pos].start_ns <= r.end_ns(); ++pos) {
    const Range& n = trace_.ranges[*pos];
    if (*pos == range || n.end_ns() > r.end_ns()) continue;
    const bool top_k = !context.moe_top_k && trace_.strings.Get(n.name) == kTopK;
    const bool want_weights = experts > 0 && context.moe_weights.size() < kMoeWeights;
    if (!top_k && !want_weights) {
      if (context.moe_top_k) break;
      continue;
    }
    const std::vector<OpArg> args = ArgsOf(trace_, n);
    if (top_k && args.size() > 1) {
      if (std::optional<int64_t> k = args[1].ConcreteInt(); k && *k > 0) context.moe_top_k = k;
    }
    if (want_weights) {
      for (const OpArg& a : args) {
        if (!a.IsTensor()) continue;
        const bool weight = a.dims.size() == 3 && a.dims[0] == experts;
        const bool seen = !context.moe_weights.empty() &&
                          context.moe_weights.back().dims == a.dims &&
                          context.moe_weights.back().type == a.type;
        if (weight && !seen) context.moe_weights.push_back(a);
        break;  // the first tensor argument only
      }
    }
  }
  return context;
}

}  // namespace opmap::analysis
