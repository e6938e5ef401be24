// BuildMappingSheet: per operator name its kernels, FLOPs and the figures Classify needs;
// per stream the fusion candidate runs. Conventions (README.md says why):
//   - FLOPs are counted at the operator the kernels are mapped to (the innermost launching
//     range), one instance once, so aten::linear → aten::addmm is never summed twice; an
//     NVTX payload `flops=` on the range takes precedence over its Input Dims.
//   - Idle before a kernel: per (device, stream) in start order, start − the latest end so
//     far, clipped at 0 (idle_time.h's HTA rule, without its negative gaps); host wait when
//     the kernel's launch call began after that end. The gap goes to the kernel's operator.
//   - Iteration time: the GPU span of the device the operator ran on (the captured window).
#include "analysis/bottleneck/mapping_sheet.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/mfu/op_flops.h"
#include "analysis/mfu/operator_mfu.h"
#include "analysis/stalls/stall_summary.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/timeline/interval_union.h"

namespace opmap::analysis {
namespace {

constexpr int64_t kSmallKernelNs = 10'000;  // METRICS.md "many kernels < 10 µs"

using Geometry = std::tuple<std::array<int32_t, 3>, std::array<int32_t, 3>, int32_t, int64_t>;

struct KernelAcc {
  int64_t count = 0;
  int64_t gpu_time_ns = 0;
  std::map<Geometry, int64_t> geometries;  // ordered: ties resolve the same way every run
};

struct OpAcc {
  std::vector<int32_t> ranges;  // distinct instances, first-seen order
  absl::flat_hash_set<int32_t> range_set;
  int64_t gpu_time_ns = 0, kernels = 0, small = 0, small_ns = 0;
  absl::flat_hash_set<int32_t> launches;
  bool launch_unknown = false;
  int64_t idle_ns = 0, host_wait_ns = 0;
  bool host_wait_unknown = false;
  bool collective = false;
  int64_t non_overlapped_comm_ns = 0;
  int64_t max_grid_blocks = 0;
  int64_t iteration_ns = 0;
  absl::flat_hash_map<StringId, KernelAcc> kernel_acc;
};

// Events of each (device, stream) in start order (trace order on ties, as idle_time.cc).
std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> StreamOrder(const Trace& trace) {
  std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> streams;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    streams[{trace.gpu_events[i].device, trace.gpu_events[i].stream}].push_back(i);
  }
  for (auto& [key, events] : streams) {
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return trace.gpu_events[a].start_ns < trace.gpu_events[b].start_ns;
    });
  }
  return streams;
}

int64_t GridBlocks(const GpuEvent& e) {
  if (e.grid[0] <= 0 || e.grid[1] <= 0 || e.grid[2] <= 0) return 0;
  return int64_t{e.grid[0]} * e.grid[1] * e.grid[2];
}

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

// FLOPs and bytes of one operator name over its instances; all-or-nothing, because a sum
// over some instances is not the operator's FLOPs.
void FlopsAndBytes(const Trace& trace, const std::string& name, const OpAcc& acc,
                   SheetOperator& row, OperatorFigures& fig) {
  double flops = 0, bytes = 0;
  int64_t flops_missing = 0, bytes_missing = 0, bytes_from_shapes = 0;
  std::string first_reason;
  for (int32_t r : acc.ranges) {
    const Range& range = trace.ranges[r];
    const FlopsEstimate est = RangeFlops(trace, range);
    // Bytes measured (NVTX payload), else the compulsory traffic of the shapes: every
    // input read once, the output written once — a lower bound on DRAM bytes (caches
    // can't make it smaller; re-reads make the real figure larger).
    const std::optional<Precision> dtype =
        PrecisionFromInputTypes(trace.strings.Get(range.input_types));
    if (range.bytes != kNone) {
      bytes += static_cast<double>(range.bytes);
    } else if (est.compulsory_elements && dtype) {
      bytes += *est.compulsory_elements * ElementBytes(*dtype);
      ++bytes_from_shapes;
    } else {
      ++bytes_missing;
    }
    if (est.flops) {
      flops += *est.flops;
      if (row.flops_formula.empty()) row.flops_formula = est.formula;
    } else {
      ++flops_missing;
      if (first_reason.empty()) first_reason = est.reason;
    }
  }
  const int64_t n = static_cast<int64_t>(acc.ranges.size());
  if (flops_missing == 0 && n > 0) {
    row.flops = flops;
    fig.flops = flops;
  } else {
    fig.flops_missing = flops_missing == n ? first_reason
                                           : absl::StrCat(first_reason, " (", flops_missing,
                                                          " of ", n, " instances)");
    row.flops_formula = fig.flops_missing;
  }
  if (bytes_missing == 0 && n > 0) {
    fig.bytes = bytes;
    if (bytes_from_shapes > 0) row.bytes_basis = "compulsory bytes from shapes (lower bound)";
  } else {
    fig.bytes_missing =
        "no DRAM byte count (no NVTX bytes= payload; no shapes with a dtype to bound it)";
  }
}

// Apportions per-kernel-name stall evidence to operators by their share of that kernel's
// GPU time: PC samples are per function, not per launch.
absl::flat_hash_map<std::string, StallBreakdown> StallsByKernel(const Trace& trace) {
  absl::flat_hash_map<std::string, StallBreakdown> out;
  if (trace.stalls.empty()) return out;
  absl::flat_hash_map<std::string, LayerType> kernel_types;
  for (const GpuEvent& e : trace.gpu_events) {
    std::string name(trace.strings.Get(e.name));
    if (!kernel_types.contains(name)) kernel_types[name] = ClassifyKernelName(name);
  }
  StallSummary summary = SummarizeStalls(trace, kernel_types);
  if (!summary.unavailable.empty()) return out;
  for (const KernelStallStats& k : summary.kernels) out[k.name] = k.breakdown;
  return out;
}

void BuildFusion(const Trace& trace, const MappingResult& mapping, const EventLayerTypes& types,
                 const std::map<std::pair<int32_t, int64_t>, std::vector<size_t>>& streams,
                 const MappingSheetOptions& options, MappingSheet& sheet) {
  auto fusible = [&](size_t i) {
    const GpuEvent& e = trace.gpu_events[i];
    const LayerType t = types.layer_type[i];
    return e.kind == GpuEventKind::kKernel && e.dur_ns < options.large_kernel_ns &&
           (t == LayerType::kElementwise || t == LayerType::kNorm || t == LayerType::kSoftmax);
  };
  auto op_name = [&](size_t i) {
    const int32_t r = mapping.events[i].range;
    return r >= 0 ? std::string(trace.strings.Get(trace.ranges[r].name)) : "(unmapped)";
  };
  // Keyed by device, stream and the kernel-name sequence: identical runs group together.
  std::map<std::tuple<int32_t, int64_t, std::vector<StringId>>, FusionCandidate> groups;
  for (const auto& [key, events] : streams) {
    size_t k = 0;
    while (k < events.size()) {
      if (!fusible(events[k])) {
        ++k;
        continue;
      }
      size_t end = k;
      while (end < events.size() && fusible(events[end])) ++end;
      const size_t len = end - k;
      if (len >= static_cast<size_t>(std::max(1, options.min_run_length))) {
        std::vector<StringId> ids;
        int64_t sum = 0;
        for (size_t j = k; j < end; ++j) {
          const GpuEvent& e = trace.gpu_events[events[j]];
          ids.push_back(e.name);
          sum += e.dur_ns;
        }
        FusionCandidate& c = groups[{key.first, key.second, ids}];
        if (c.occurrences == 0) {
          for (size_t j = k; j < end; ++j) {
            c.kernels.emplace_back(trace.strings.Get(trace.gpu_events[events[j]].name));
            c.operators.push_back(op_name(events[j]));
          }
          c.stream = static_cast<int32_t>(key.second);
          if (k > 0) c.before = std::string(trace.strings.Get(trace.gpu_events[events[k - 1]].name));
          if (end < events.size()) {
            c.after = std::string(trace.strings.Get(trace.gpu_events[events[end]].name));
          }
        }
        ++c.occurrences;
        c.gpu_time_ns += sum;
        // GPU time only: the fused kernel is assumed to take at least the run's mean kernel
        // time, so at most the other L − 1 means go. Gaps inside the run are not counted:
        // they are host wait / launch overhead, bounded by those mitigations instead.
        c.saving_bound_ns += sum - sum / static_cast<int64_t>(len);
      }
      k = end;
    }
  }
  for (auto& [key, c] : groups) sheet.fusion.push_back(std::move(c));
  std::stable_sort(sheet.fusion.begin(), sheet.fusion.end(),
                   [](const FusionCandidate& a, const FusionCandidate& b) {
                     if (a.saving_bound_ns != b.saving_bound_ns) {
                       return a.saving_bound_ns > b.saving_bound_ns;
                     }
                     return a.occurrences > b.occurrences;
                   });
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
  const auto streams = StreamOrder(trace);

  std::vector<bool> is_comm(n, false);
  std::map<int32_t, std::pair<int64_t, int64_t>> device_span;  // first start, last end
  int64_t unmapped = 0, unmapped_ns = 0;
  for (size_t i = 0; i < n; ++i) {
    const GpuEvent& e = trace.gpu_events[i];
    sheet.gpu_time_ns += e.dur_ns;
    is_comm[i] = e.kind == GpuEventKind::kKernel &&
                 ClassifyKernelName(trace.strings.Get(e.name)) == LayerType::kCommunication;
    auto [it, added] = device_span.try_emplace(e.device, e.start_ns, e.end_ns());
    if (!added) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.end_ns());
    }
    if (mapping.events[i].range < 0) {
      ++unmapped;
      unmapped_ns += e.dur_ns;
    }
  }
  const std::vector<int64_t> comm_exposed = NonOverlappedComm(trace, types, is_comm);

  absl::flat_hash_map<StringId, OpAcc> ops;
  for (size_t i = 0; i < n; ++i) {
    const int32_t r = mapping.events[i].range;
    if (r < 0) continue;
    const GpuEvent& e = trace.gpu_events[i];
    OpAcc& acc = ops[trace.ranges[r].name];
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
    acc.collective |= is_comm[i];
    acc.non_overlapped_comm_ns += comm_exposed[i];
    acc.max_grid_blocks = std::max(acc.max_grid_blocks, GridBlocks(e));
    const auto& span = device_span[e.device];
    acc.iteration_ns = std::max(acc.iteration_ns, span.second - span.first);
    KernelAcc& k = acc.kernel_acc[e.name];
    ++k.count;
    k.gpu_time_ns += e.dur_ns;
    ++k.geometries[{e.grid, e.block, e.registers_per_thread, e.shared_memory_bytes}];
  }

  // Idle before each kernel, attributed to its operator.
  for (const auto& [key, events] : streams) {
    int64_t busy_until = 0;
    for (size_t k = 0; k < events.size(); ++k) {
      const size_t i = events[k];
      const GpuEvent& e = trace.gpu_events[i];
      const int32_t r = mapping.events[i].range;
      if (k > 0 && r >= 0 && e.start_ns > busy_until) {
        OpAcc& acc = ops[trace.ranges[r].name];
        const int64_t gap = e.start_ns - busy_until;
        acc.idle_ns += gap;
        const int32_t api = mapping.events[i].launch_api;
        if (api < 0 || static_cast<size_t>(api) >= trace.api_calls.size()) {
          acc.host_wait_unknown = true;
        } else if (trace.api_calls[api].start_ns > busy_until) {
          acc.host_wait_ns += gap;
        }
      }
      busy_until = k == 0 ? e.end_ns() : std::max(busy_until, e.end_ns());
    }
  }

  absl::flat_hash_map<std::string, int64_t> kernel_total_ns;
  const auto stalls = StallsByKernel(trace);
  if (!stalls.empty()) {
    for (const GpuEvent& e : trace.gpu_events) {
      kernel_total_ns[std::string(trace.strings.Get(e.name))] += e.dur_ns;
    }
  }

  bool any_bytes = false, any_shape_bytes = false, any_precision = false;
  for (auto& [name_id, acc] : ops) {
    SheetOperator row;
    row.name = std::string(trace.strings.Get(name_id));
    row.layer_type = types.operator_types.at(name_id).layer_type;
    row.instances = static_cast<int64_t>(acc.ranges.size());
    row.gpu_time_ns = acc.gpu_time_ns;
    row.share = sheet.gpu_time_ns > 0 ? static_cast<double>(acc.gpu_time_ns) / sheet.gpu_time_ns
                                      : 0;
    row.expected = ExpectedClass(row.layer_type);

    OperatorFigures fig;
    fig.name = row.name;
    fig.layer_type = row.layer_type;
    fig.instances = row.instances;
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
    fig.precision = Precision::kBf16;
    FlopsAndBytes(trace, row.name, acc, row, fig);
    any_bytes |= fig.bytes.has_value();
    any_shape_bytes |= !row.bytes_basis.empty();
    for (int32_t r : acc.ranges) {
      if (auto p = PrecisionFromInputTypes(trace.strings.Get(trace.ranges[r].input_types))) {
        fig.precision = *p;
        any_precision = true;
        break;
      }
    }

    double stall_memory = 0, stall_all = 0;
    for (const auto& [kname, k] : acc.kernel_acc) {
      const std::string kernel_name(trace.strings.Get(kname));
      SheetKernel sk;
      sk.name = kernel_name;
      sk.count = k.count;
      sk.gpu_time_ns = k.gpu_time_ns;
      sk.share = sheet.gpu_time_ns > 0 ? static_cast<double>(k.gpu_time_ns) / sheet.gpu_time_ns
                                       : 0;
      const auto best = std::max_element(
          k.geometries.begin(), k.geometries.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      std::tie(sk.grid, sk.block, sk.registers_per_thread, sk.shared_memory_bytes) = best->first;
      row.kernels.push_back(std::move(sk));
      auto s = stalls.find(kernel_name);
      if (s != stalls.end() && kernel_total_ns[kernel_name] > 0) {
        const double w = static_cast<double>(k.gpu_time_ns) / kernel_total_ns[kernel_name];
        stall_memory += w * s->second.memory;
        stall_all += w * s->second.stalled();
      }
    }
    if (stall_all > 0) fig.memory_stall_fraction = stall_memory / stall_all;
    std::sort(row.kernels.begin(), row.kernels.end(),
              [](const SheetKernel& a, const SheetKernel& b) {
                if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
                return a.name < b.name;
              });
    row.observed = Classify(fig, options.envelope);
    row.intensity = row.observed.intensity;
    row.figures = std::move(fig);
    sheet.operators.push_back(std::move(row));
  }
  std::sort(sheet.operators.begin(), sheet.operators.end(),
            [](const SheetOperator& a, const SheetOperator& b) {
              if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
              return a.name < b.name;
            });

  BuildFusion(trace, mapping, types, streams, options, sheet);

  sheet.notes.push_back(
      "FLOPs are counted at the operator the kernels are mapped to (the innermost launching "
      "range), each instance once, so nested operators are never summed twice; an NVTX "
      "flops= payload takes precedence over Input Dims");
  if (!any_precision) {
    sheet.notes.push_back("utilization assumes bf16 peaks: the trace records no math precision");
  }
  if (any_shape_bytes) {
    sheet.notes.push_back(
        "bytes marked 'from shapes' are compulsory traffic (inputs read once, output written "
        "once, Input Dims x Input type): a lower bound on DRAM bytes, so U_m is a lower bound "
        "and intensity an upper bound");
  }
  if (options.envelope == nullptr) {
    sheet.notes.push_back("unavailable: no hardware envelope, so U_c, U_m and the ridge");
  }
  if (!any_bytes) {
    sheet.notes.push_back("unavailable: DRAM bytes (no NVTX bytes= payload or counters), so "
                          "U_m and intensity");
  }
  if (!stalls.empty()) {
    sheet.notes.push_back("memory-stall fractions are per kernel name, apportioned to "
                          "operators by their share of that kernel's GPU time");
  }
  if (unmapped > 0) {
    sheet.notes.push_back(absl::StrCat(unmapped, " GPU events (", unmapped_ns,
                                       " ns) map to no operator and are in no row"));
  }
  return sheet;
}

}  // namespace opmap::analysis
