// One mapping-sheet group: its cost (analysis/roofline: formula, NVTX payload, or measured by
// Nsight Compute), the precision and path whose peak applies, its timing figures, the
// roofline's expected class and the observed class (docs/metrics.md).
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/bottleneck/sheet_internal.h"
#include "analysis/mfu/operator_mfu.h"
#include "analysis/roofline/op_args.h"
#include "analysis/roofline/op_cost.h"

namespace opmap::analysis::sheet {
namespace {

// The cost of all instances of a group. Instances share their recorded arguments, so one
// formula serves all of them unless NVTX payloads give each its own figures or the trace
// around them differs (paged attention in different serving steps): then each instance is
// costed with its own context and the figures summed.
OpCost GroupCost(const Trace& trace, const GroupAcc& acc, std::optional<int> hint,
                 const RangeContexts& contexts) {
  auto context_of = [&](int32_t r) {
    CostContext context = contexts.For(r);
    context.element_bytes_hint = hint;
    return context;
  };
  bool per_instance = false;
  const CostContext first_context = context_of(acc.ranges.front());
  const bool reads_context = CostReadsTraceContext(trace.strings.Get(acc.name));
  for (int32_t r : acc.ranges) {
    per_instance |= trace.ranges[r].flops != kNone || trace.ranges[r].bytes != kNone;
    if (reads_context && !per_instance && r != acc.ranges.front()) {
      const CostContext c = contexts.For(r);
      per_instance |= c.step != first_context.step || c.moe_top_k != first_context.moe_top_k ||
                      c.moe_weights.size() != first_context.moe_weights.size();
      for (size_t w = 0; !per_instance && w < c.moe_weights.size(); ++w) {
        per_instance |= c.moe_weights[w].dims != first_context.moe_weights[w].dims ||
                        c.moe_weights[w].type != first_context.moe_weights[w].type;
      }
    }
  }
  const double n = static_cast<double>(acc.ranges.size());
  OpCost first = RangeCost(trace, trace.ranges[acc.ranges.front()], first_context);
  if (!per_instance) {
    if (first.flops) *first.flops *= n;
    if (first.model_flops) *first.model_flops *= n;
    if (first.bytes) *first.bytes *= n;
    return first;
  }
  OpCost sum = first;
  for (size_t i = 1; i < acc.ranges.size(); ++i) {
    const OpCost c = RangeCost(trace, trace.ranges[acc.ranges[i]], context_of(acc.ranges[i]));
    auto add = [](std::optional<double>& total, const std::optional<double>& v) {
      if (total && v) {
        *total += *v;
      } else {
        total.reset();  // all or nothing: a partial sum is not the group's figure
      }
    };
    add(sum.flops, c.flops);
    add(sum.model_flops, c.model_flops);
    add(sum.bytes, c.bytes);
    if (sum.missing.empty()) sum.missing = c.missing;
  }
  return sum;
}

// The precision whose peak applies and where it came from.
std::pair<Precision, std::string> GroupPrecision(const Trace& trace, const GroupAcc& acc,
                                                 const OpCost& cost) {
  if (auto p = PrecisionFromInputType(cost.compute_dtype)) return {*p, "Input type"};
  if (DtypeBytes(cost.compute_dtype) && !IsFloatDtype(cost.compute_dtype)) {
    return {Precision::kFp32, "integer dtype (fp32 vector peak)"};
  }
  if (cost.compute_dtype == "double" || cost.compute_dtype == "c10::Double") {
    return {Precision::kFp32, "fp64 dtype (fp32 peak, an upper bound on fp64)"};
  }
  int votes[5] = {0, 0, 0, 0, 0};
  for (const auto& [name, k] : acc.kernel_acc) {
    if (auto p = PrecisionFromKernelName(trace.strings.Get(name))) {
      votes[static_cast<int>(*p)] += static_cast<int>(k.count);
    }
  }
  const int best = static_cast<int>(std::max_element(votes, votes + 5) - votes);
  if (votes[best] > 0) return {static_cast<Precision>(best), "kernel name"};
  return {Precision::kBf16, "assumed bf16 (no dtype recorded)"};
}

}  // namespace

StallInputs StallsByKernel(const Trace& trace) {
  StallInputs out;
  if (trace.stalls.empty()) return out;
  absl::flat_hash_map<std::string, LayerType> kernel_types;
  for (const GpuEvent& e : trace.gpu_events) {
    std::string name(trace.strings.Get(e.name));
    if (!kernel_types.contains(name)) kernel_types[name] = ClassifyKernelName(name);
  }
  StallSummary summary = SummarizeStalls(trace, kernel_types);
  if (!summary.unavailable.empty()) return out;
  for (const KernelStallStats& k : summary.kernels) out.by_kernel[k.name] = k.breakdown;
  for (const GpuEvent& e : trace.gpu_events) {
    out.kernel_total_ns[std::string(trace.strings.Get(e.name))] += e.dur_ns;
  }
  return out;
}

OperatorFigures TimingFigures(const Trace& trace, const GroupAcc& acc, const StallInputs& stalls,
                              std::vector<SheetKernel>* kernels, int64_t total_gpu_ns) {
  OperatorFigures fig;
  fig.name = std::string(trace.strings.Get(acc.name));
  fig.instances = static_cast<int64_t>(acc.ranges.size());
  fig.gpu_time_ns = acc.gpu_time_ns;
  fig.kernel_count = acc.kernels;
  fig.small_kernel_count = acc.small;
  fig.small_kernel_time_ns = acc.small_ns;
  if (!acc.launch_unknown) {
    int64_t launch_ns = 0;
    for (int32_t api : acc.launches) launch_ns += trace.api_calls[api].dur_ns;
    fig.launch_call_ns = launch_ns;
  }
  fig.idle_ns = acc.idle_ns;
  if (!acc.host_wait_unknown) fig.host_wait_idle_ns = acc.host_wait_ns;
  fig.collective = acc.collective;
  fig.non_overlapped_comm_ns = acc.non_overlapped_comm_ns;
  if (acc.iteration_ns > 0) fig.iteration_ns = acc.iteration_ns;
  if (acc.max_grid_blocks > 0) fig.max_grid_blocks = acc.max_grid_blocks;
  double stall_memory = 0, stall_all = 0;
  for (const auto& [kname, k] : acc.kernel_acc) {
    const std::string kernel_name(trace.strings.Get(kname));
    if (kernels != nullptr) {
      SheetKernel sk;
      sk.name = kernel_name;
      sk.count = k.count;
      sk.gpu_time_ns = k.gpu_time_ns;
      sk.share = total_gpu_ns > 0 ? static_cast<double>(k.gpu_time_ns) / total_gpu_ns : 0;
      const auto best = std::max_element(
          k.geometries.begin(), k.geometries.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      std::tie(sk.grid, sk.block, sk.registers_per_thread, sk.shared_memory_bytes) = best->first;
      kernels->push_back(std::move(sk));
    }
    auto s = stalls.by_kernel.find(kernel_name);
    auto total = stalls.kernel_total_ns.find(kernel_name);
    if (s != stalls.by_kernel.end() && total != stalls.kernel_total_ns.end() && total->second > 0) {
      const double w = static_cast<double>(k.gpu_time_ns) / total->second;
      stall_memory += w * s->second.memory;
      stall_all += w * s->second.stalled();
    }
  }
  if (stall_all > 0) fig.memory_stall_fraction = stall_memory / stall_all;
  if (kernels != nullptr) {
    std::sort(kernels->begin(), kernels->end(), [](const SheetKernel& a, const SheetKernel& b) {
      if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
      return a.name < b.name;
    });
  }
  return fig;
}

SheetGroup FinishGroup(const Trace& trace, const GroupAcc& acc, StringId dims, StringId types,
                       StringId concrete, LayerType layer_type, const StallInputs& stalls,
                       const MappingSheetOptions& options, int64_t total_gpu_ns,
                       const RangeContexts& contexts) {
  SheetGroup g;
  g.op = std::string(trace.strings.Get(acc.name));
  g.input_dims = CompactArrayText(trace.strings.Get(dims));
  g.input_type = CompactArrayText(trace.strings.Get(types));
  g.concrete_inputs = CompactArrayText(trace.strings.Get(concrete));
  g.layer_type = layer_type;
  g.instances = static_cast<int64_t>(acc.ranges.size());
  g.gpu_time_ns = acc.gpu_time_ns;
  g.share = total_gpu_ns > 0 ? static_cast<double>(acc.gpu_time_ns) / total_gpu_ns : 0;

  std::optional<int> hint;
  for (const auto& [name, k] : acc.kernel_acc) {
    if (!hint) hint = ElementBytesFromKernelName(trace.strings.Get(name));
  }
  OpCost cost = GroupCost(trace, acc, hint, contexts);
  // Measured beats derived: Nsight Compute rows joined to this group's kernels.
  auto measured_label = [&](int64_t measured) {
    return measured == acc.kernels
               ? std::string("Nsight Compute (measured)")
               : absl::StrCat("Nsight Compute (measured on ", measured, " of ", acc.kernels,
                              " kernels, mean scaled to all)");
  };
  if (acc.measured_bytes_kernels > 0) {
    cost.bytes = acc.measured_bytes / acc.measured_bytes_kernels * acc.kernels;
    cost.bytes_source = measured_label(acc.measured_bytes_kernels);
    cost.bytes_formula = "dram__bytes_read.sum + dram__bytes_write.sum";
  }
  if (acc.measured_flops_kernels > 0) {
    cost.flops = acc.measured_flops / acc.measured_flops_kernels * acc.kernels;
    cost.flops_source = measured_label(acc.measured_flops_kernels);
    if (!cost.model_flops) cost.model_flops = cost.flops;
  }
  if (cost.flops && cost.bytes) cost.missing.clear();
  g.cost = cost;

  OperatorFigures fig = TimingFigures(trace, acc, stalls, &g.kernels, total_gpu_ns);
  fig.layer_type = layer_type;
  fig.flops = cost.flops;
  fig.bytes = cost.bytes;
  fig.bytes_source = cost.bytes_source;
  if (!cost.flops) fig.flops_missing = cost.missing;
  if (!cost.bytes) fig.bytes_missing = cost.missing.empty() ? "no byte count" : cost.missing;
  std::tie(fig.precision, g.precision_source) = GroupPrecision(trace, acc, cost);
  fig.vector_path = !cost.matrix;
  if (acc.gpu_time_ns > 0) {
    const double seconds = static_cast<double>(acc.gpu_time_ns) * 1e-9;
    if (cost.flops) g.achieved_flops_per_s = *cost.flops / seconds;
    if (cost.bytes) g.achieved_bytes_per_s = *cost.bytes / seconds;
  }
  g.expected = ExpectedClass(fig, options.envelope, &g.expected_basis);
  g.observed = Classify(fig, options.envelope);
  g.figures = std::move(fig);
  return g;
}

}  // namespace opmap::analysis::sheet
