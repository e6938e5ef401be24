// BuildMappingSheet: per operator group (operator, input dims, dtypes, concrete inputs) its
// kernels, cost and the figures Classify needs; per operator the aggregate of its groups;
// per stream the fusion candidate runs. Conventions (README.md says why):
//   - FLOPs and bytes are counted at the operator the kernels are mapped to (the innermost
//     launching range), one instance once, so aten::linear → aten::addmm is never summed
//     twice; Nsight Compute measurements, then NVTX payloads, take precedence over formulas.
//   - Idle before a kernel: per (device, stream) in start order, start − the latest end so
//     far, clipped at 0 (idle_time.h's HTA rule, without its negative gaps); host wait when
//     the kernel's launch call began after that end. The gap goes to the kernel's group.
//   - Iteration time: the GPU span of the device the operator ran on (the captured window).
#include "analysis/bottleneck/mapping_sheet.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/bottleneck/bottleneck_class.h"
#include "analysis/bottleneck/sheet_internal.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/timeline/interval_union.h"

namespace opmap::analysis {
namespace {

using sheet::GroupAcc;
using GroupKey = std::tuple<StringId, StringId, StringId, StringId>;

// Per GPU event: the part of a communication kernel not covered by compute on its device.
std::vector<int64_t> NonOverlappedComm(const Trace& trace, const EventLayerTypes& types,
                                       const std::vector<bool>& is_comm) {
  std::map<int32_t, std::vector<Interval>> compute;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    if (!types.is_compute[i]) continue;
    const GpuEvent& e = trace.gpu_events[i];
    compute[e.device].push_back({e.start_ns, e.end_ns()});
  }
  for (auto& [device, v] : compute) v = MergeIntervals(std::move(v));
  std::vector<int64_t> out(trace.gpu_events.size(), 0);
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    if (!is_comm[i]) continue;
    const GpuEvent& e = trace.gpu_events[i];
    int64_t covered = 0;
    for (const Interval& c : compute[e.device]) {  // merged, sorted
      if (c.start_ns >= e.end_ns()) break;
      covered += std::max<int64_t>(0, std::min(c.end_ns, e.end_ns()) -
                                          std::max(c.start_ns, e.start_ns));
    }
    out[i] = e.dur_ns - covered;
  }
  return out;
}

// Adds one GPU event to an accumulation.
void AddEvent(const Trace& trace, const MappingResult& mapping, size_t i, int32_t r,
              bool is_comm, int64_t comm_exposed, int64_t iteration_ns, GroupAcc& acc) {
  const GpuEvent& e = trace.gpu_events[i];
  acc.name = trace.ranges[r].name;
  if (acc.range_set.insert(r).second) acc.ranges.push_back(r);
  acc.gpu_time_ns += e.dur_ns;
  ++acc.kernels;
  if (e.dur_ns < kSmallKernelNs) {
    ++acc.small;
    acc.small_ns += e.dur_ns;
  }
  const int32_t api = mapping.events[i].launch_api;
  if (api >= 0 && static_cast<size_t>(api) < trace.api_calls.size()) {
    acc.launches.insert(api);  // a graph launch counts once for all its kernels
  } else {
    acc.launch_unknown = true;
  }
  acc.collective |= is_comm;
  acc.non_overlapped_comm_ns += comm_exposed;
  if (e.grid[0] > 0 && e.grid[1] > 0 && e.grid[2] > 0) {
    acc.max_grid_blocks =
        std::max(acc.max_grid_blocks, int64_t{e.grid[0]} * e.grid[1] * e.grid[2]);
  }
  acc.iteration_ns = std::max(acc.iteration_ns, iteration_ns);
  sheet::KernelAcc& k = acc.kernel_acc[e.name];
  ++k.count;
  k.gpu_time_ns += e.dur_ns;
  ++k.geometries[{e.grid, e.block, e.registers_per_thread, e.shared_memory_bytes}];
}

void AddIdle(const Trace& trace, const MappingResult& mapping, size_t i, int64_t gap,
             int64_t busy_until, GroupAcc& acc) {
  acc.idle_ns += gap;
  const int32_t api = mapping.events[i].launch_api;
  if (api < 0 || static_cast<size_t>(api) >= trace.api_calls.size()) {
    acc.host_wait_unknown = true;
  } else if (trace.api_calls[api].start_ns > busy_until) {
    acc.host_wait_ns += gap;
  }
}

// The operator row: its own timing figures, FLOPs and bytes summed over its groups (all or
// nothing), the path and precision of its largest group.
SheetOperator AggregateOperator(const Trace& trace, const GroupAcc& acc,
                                const std::vector<int32_t>& group_ids, MappingSheet& sheet,
                                const sheet::StallInputs& stalls,
                                const MappingSheetOptions& options) {
  SheetOperator row;
  row.name = std::string(trace.strings.Get(acc.name));
  row.groups = group_ids;
  OperatorFigures fig = sheet::TimingFigures(trace, acc, stalls, &row.kernels, sheet.gpu_time_ns);
  double flops = 0, bytes = 0;
  bool all_flops = true, all_bytes = true;
  std::string flops_missing, bytes_missing;
  std::vector<std::string> sources;
  const SheetGroup* largest = nullptr;
  for (int32_t gi : group_ids) {
    const SheetGroup& g = sheet.groups[gi];
    if (largest == nullptr || g.gpu_time_ns > largest->gpu_time_ns) largest = &g;
    row.class_time_ns[static_cast<int>(g.observed.cls)] += g.gpu_time_ns;
    if (g.cost.flops) flops += *g.cost.flops; else { all_flops = false; if (flops_missing.empty()) flops_missing = g.cost.missing; }
    if (g.cost.bytes) bytes += *g.cost.bytes; else { all_bytes = false; if (bytes_missing.empty()) bytes_missing = g.cost.missing; }
    if (g.cost.bytes && std::find(sources.begin(), sources.end(), g.cost.bytes_source) == sources.end()) {
      sources.push_back(g.cost.bytes_source);
    }
  }
  row.layer_type = largest->layer_type;
  row.instances = fig.instances;
  row.gpu_time_ns = acc.gpu_time_ns;
  row.share = sheet.gpu_time_ns > 0 ? static_cast<double>(acc.gpu_time_ns) / sheet.gpu_time_ns : 0;
  fig.layer_type = row.layer_type;
  fig.precision = largest->figures.precision;
  fig.vector_path = largest->figures.vector_path;
  const int64_t n = static_cast<int64_t>(group_ids.size());
  if (all_flops) {
    fig.flops = flops;
    row.flops = flops;
    row.flops_formula = largest->cost.formula;
  } else {
    fig.flops_missing = flops_missing;
    row.flops_formula = flops_missing;
  }
  if (all_bytes) {
    fig.bytes = bytes;
    for (std::string& s : sources) {
      if (s == "formula") s = "compulsory bytes from shapes";
    }
    row.bytes_basis = absl::StrJoin(sources, " + ");
    fig.bytes_source = row.bytes_basis;
  } else {
    fig.bytes_missing = bytes_missing.empty() ? "no byte count" : bytes_missing;
  }
  if (n > 1 && (!all_flops || !all_bytes)) {
    const std::string why = absl::StrCat(" (in some of its ", n, " groups)");
    if (!all_flops) fig.flops_missing += why;
    if (!all_bytes) fig.bytes_missing += why;
  }
  row.expected = ExpectedClass(fig, options.envelope, nullptr);
  row.observed = Classify(fig, options.envelope);
  row.intensity = row.observed.intensity;
  row.figures = std::move(fig);
  return row;
}

}  // namespace

MappingSheet BuildMappingSheet(const Trace& trace, const MappingResult& mapping,
                               const MappingSheetOptions& options) {
  MappingSheet sheet;
  const size_t n = trace.gpu_events.size();
  if (mapping.events.size() != n) {
    sheet.notes.push_back("unavailable: the mapping does not match the trace's GPU events");
    return sheet;
  }
  const EventLayerTypes types = ClassifyGpuEvents(trace, mapping);
  const auto streams = sheet::StreamOrder(trace);

  std::vector<bool> is_comm(n, false);
  std::map<int32_t, std::pair<int64_t, int64_t>> device_span;  // first start, last end
  int64_t unmapped = 0, unmapped_ns = 0;
  absl::flat_hash_map<StringId, bool> comm_name;  // one classification per kernel name
  for (size_t i = 0; i < n; ++i) {
    const GpuEvent& e = trace.gpu_events[i];
    sheet.gpu_time_ns += e.dur_ns;
    if (e.kind == GpuEventKind::kKernel) {
      auto [it, added] = comm_name.try_emplace(e.name, false);
      if (added) {
        it->second = ClassifyKernelName(trace.strings.Get(e.name)) == LayerType::kCommunication;
      }
      is_comm[i] = it->second;
    }
    auto [it, added] = device_span.try_emplace(e.device, e.start_ns, e.end_ns());
    if (!added) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.end_ns());
    }
    if (mapping.events[i].range < 0) {
      ++unmapped;
      unmapped_ns += e.dur_ns;
    } else {
      sheet.mapped_ns += e.dur_ns;
    }
  }
  const std::vector<int64_t> comm_exposed = NonOverlappedComm(trace, types, is_comm);
  std::vector<const MeasuredWork*> measured(n, nullptr);
  for (const MeasuredWork& m : trace.measured) {
    if (m.event >= 0 && static_cast<size_t>(m.event) < n) measured[m.event] = &m;
  }

  // Groups in first-seen order, and per operator name the same figures over all groups.
  std::map<GroupKey, int32_t> group_index;
  std::vector<GroupAcc> group_acc;
  std::vector<GroupKey> group_keys;
  absl::flat_hash_map<StringId, GroupAcc> op_acc;
  std::vector<int32_t> event_group(n, -1);
  std::vector<int32_t> event_owner(n, -1);
  std::vector<LayerType> group_layer;
  sheet::RooflineOwners owners(trace);
  for (size_t i = 0; i < n; ++i) {
    if (mapping.events[i].range < 0) continue;
    const int32_t r = owners.Owner(mapping.events[i].range);
    event_owner[i] = r;
    const Range& range = trace.ranges[r];
    const GroupKey key{range.name, range.input_dims, range.input_types, range.concrete_inputs};
    auto [it, added] = group_index.try_emplace(key, static_cast<int32_t>(group_acc.size()));
    if (added) {
      group_acc.emplace_back();
      group_keys.push_back(key);
      // The layer type of the operator the kernels were mapped to (the caller's name may
      // have launched nothing itself).
      group_layer.push_back(
          types.operator_types.at(trace.ranges[mapping.events[i].range].name).layer_type);
    }
    event_group[i] = it->second;
    const auto& span = device_span[trace.gpu_events[i].device];
    const int64_t iteration = span.second - span.first;
    GroupAcc& g = group_acc[it->second];
    AddEvent(trace, mapping, i, r, is_comm[i], comm_exposed[i], iteration, g);
    AddEvent(trace, mapping, i, r, is_comm[i], comm_exposed[i], iteration, op_acc[range.name]);
    if (const MeasuredWork* m = measured[i]) {
      if (m->dram_bytes) {
        ++g.measured_bytes_kernels;
        g.measured_bytes += *m->dram_bytes;
      }
      if (m->flops) {
        ++g.measured_flops_kernels;
        g.measured_flops += *m->flops;
      }
    }
  }

  // Idle before each kernel, attributed to its group and operator.
  for (const auto& [key, events] : streams) {
    int64_t busy_until = 0;
    for (size_t k = 0; k < events.size(); ++k) {
      const size_t i = events[k];
      const GpuEvent& e = trace.gpu_events[i];
      if (k > 0 && event_group[i] >= 0 && e.start_ns > busy_until) {
        const int64_t gap = e.start_ns - busy_until;
        AddIdle(trace, mapping, i, gap, busy_until, group_acc[event_group[i]]);
        AddIdle(trace, mapping, i, gap, busy_until, op_acc[trace.ranges[event_owner[i]].name]);
      }
      busy_until = k == 0 ? e.end_ns() : std::max(busy_until, e.end_ns());
    }
  }

  const sheet::StallInputs stalls = sheet::StallsByKernel(trace);
  const RangeContexts contexts(trace);
  absl::flat_hash_map<StringId, std::vector<int32_t>> op_groups;
  bool any_bytes = false, any_assumed_precision = false;
  for (size_t gi = 0; gi < group_acc.size(); ++gi) {
    const auto& [op, dims, dtypes, concrete] = group_keys[gi];
    (void)op;
    SheetGroup g = sheet::FinishGroup(trace, group_acc[gi], dims, dtypes, concrete,
                                      group_layer[gi], stalls, options, sheet.gpu_time_ns,
                                      contexts);
    if (g.cost.flops && g.cost.bytes) sheet.costed_ns += g.gpu_time_ns;
    if (g.observed.cls != BottleneckClass::kUnclassified) sheet.classified_ns += g.gpu_time_ns;
    any_bytes |= g.cost.bytes.has_value();
    any_assumed_precision |= g.precision_source.rfind("assumed", 0) == 0;
    sheet.groups.push_back(std::move(g));
  }
  // Groups by GPU time; operators refer to them by their sorted index.
  std::vector<int32_t> order(sheet.groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return sheet.groups[a].gpu_time_ns > sheet.groups[b].gpu_time_ns;
  });
  std::vector<SheetGroup> sorted;
  sorted.reserve(order.size());
  for (size_t pos = 0; pos < order.size(); ++pos) {
    op_groups[std::get<0>(group_keys[order[pos]])].push_back(static_cast<int32_t>(pos));
    sorted.push_back(std::move(sheet.groups[order[pos]]));
  }
  sheet.groups = std::move(sorted);
  for (const auto& [name, acc] : op_acc) {
    sheet.operators.push_back(
        AggregateOperator(trace, acc, op_groups[name], sheet, stalls, options));
  }
  std::sort(sheet.operators.begin(), sheet.operators.end(),
            [](const SheetOperator& a, const SheetOperator& b) {
              if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
              return a.name < b.name;
            });

  sheet::BuildFusion(trace, mapping, types, streams, options, sheet);

  sheet.notes.push_back(
      "groups are (operator, Input Dims, Input type, Concrete Inputs), as TraceLens groups; "
      "FLOPs and bytes are counted at the operator the kernels are mapped to (the innermost "
      "launching range; an attention or convolution implementation op at its caller, e.g. "
      "aten::_flash_attention_forward at aten::_scaled_dot_product_flash_attention), each "
      "instance once, so nested operators are never summed twice");
  sheet.notes.push_back(
      "bytes from shapes are compulsory traffic (inputs read once, outputs written once): a "
      "lower bound on DRAM bytes, so U_m is a lower bound and intensity an upper bound; "
      "Nsight Compute measurements (--ncu) and NVTX bytes= payloads replace them, labelled");
  if (any_assumed_precision) {
    sheet.notes.push_back("groups whose precision says 'assumed bf16' recorded no dtype");
  }
  if (options.envelope == nullptr) {
    sheet.notes.push_back("unavailable: no hardware envelope, so U_c, U_m and the ridge");
  }
  if (!any_bytes) {
    sheet.notes.push_back("unavailable: bytes (no shapes with dtypes, NVTX bytes= payload or "
                          "Nsight Compute rows), so U_m and intensity");
  }
  if (!stalls.by_kernel.empty()) {
    sheet.notes.push_back("memory-stall fractions are per kernel name, apportioned to "
                          "groups by their share of that kernel's GPU time");
  }
  if (unmapped > 0) {
    sheet.notes.push_back(absl::StrCat(unmapped, " GPU events (", unmapped_ns,
                                       " ns) map to no operator and are in no row"));
  }
  return sheet;
}

}  // namespace opmap::analysis
