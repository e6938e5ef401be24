#include "analysis/stalls/ncu_summary.h"

#include <algorithm>
#include <array>
#include <map>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/stalls/stall_reasons.h"

namespace opmap::analysis {
namespace {

constexpr std::array<std::string_view, 19> kNcuReasons = {
    "barrier",       "branch_resolving", "dispatch_stall",     "drain",
    "gmma",          "imc_miss",         "lg_throttle",        "long_scoreboard",
    "math_pipe_throttle", "membar",      "mio_throttle",       "misc",
    "no_instruction", "not_selected",    "selected",           "short_scoreboard",
    "sleeping",      "tex_throttle",     "wait"};

bool IsNcuReason(std::string_view r) {
  return std::binary_search(kNcuReasons.begin(), kNcuReasons.end(), r);
}

// Accumulates what a row's stall fields rest on, over one or more launches.
struct CoverageAcc {
  absl::btree_set<std::string> present, missing, unrecognized;
  int64_t launches = 0, with_stalls = 0;

  void Add(const StallCoverage& c, bool has_stalls) {
    ++launches;
    if (!has_stalls) return;
    ++with_stalls;
    present.insert(c.present.begin(), c.present.end());
    missing.insert(c.missing.begin(), c.missing.end());
    unrecognized.insert(c.unrecognized.begin(), c.unrecognized.end());
  }

  StallCoverage Finish(const StallBreakdown& b, std::string_view what) const {
    StallCoverage c;
    c.present.assign(present.begin(), present.end());
    c.missing.assign(missing.begin(), missing.end());
    c.unrecognized.assign(unrecognized.begin(), unrecognized.end());
    if (with_stalls == 0) {
      c.status = absl::StrCat("unavailable: no warp-stall ratios for ",
                              absl::string_view(what.data(), what.size()),
                              " (smsp__average_warps_issue_stalled_<reason>_per_issue_active."
                              "ratio; ncu --section WarpStateStats)");
      return c;
    }
    if (b.stalled() <= 0) {
      c.status = "unavailable: no stalled cycles recorded (only selected)";
      return c;
    }
    std::vector<std::string> gaps;
    if (!c.missing.empty()) {
      gaps.push_back(absl::StrCat("reasons ", absl::StrJoin(c.missing, ", "), " absent"));
    }
    if (with_stalls < launches) {
      gaps.push_back(absl::StrFormat("%d of %d launches without stall ratios",
                                     launches - with_stalls, launches));
    }
    c.status = gaps.empty() ? "complete" : "partial: " + absl::StrJoin(gaps, "; ");
    return c;
  }
};

void KernelStalls(const NcuKernel& k, NcuKernelRow& row) {
  absl::btree_set<std::string> present;
  for (const auto& [metric, value] : k.stall_ratios) {
    std::string reason = NormalizeStallReason(metric);
    row.breakdown.Add(ClassifyStallReason(reason), value);
    present.insert(std::move(reason));
  }
  CoverageAcc acc;
  StallCoverage c;
  c.present.assign(present.begin(), present.end());
  for (std::string_view r : kNcuReasons) {
    if (!present.contains(std::string(r))) c.missing.emplace_back(r);
  }
  for (const std::string& r : c.present) {
    if (!IsNcuReason(r)) c.unrecognized.push_back(r);
  }
  acc.Add(c, !k.stall_ratios.empty());
  row.stalls = acc.Finish(row.breakdown, "this kernel");
}

struct GroupAcc {
  NcuGroupRow row;
  CoverageAcc coverage;
};

}  // namespace

std::span<const std::string_view> NcuStallReasons() { return kNcuReasons; }

NcuSummary SummarizeNcu(const NcuProfile& profile) {
  NcuSummary out;
  out.format = profile.format;
  out.notes = profile.notes;
  int64_t undated = 0;
  for (const NcuKernel& k : profile.kernels) {
    NcuKernelRow& row = out.kernels.emplace_back();
    row.id = k.id;
    row.name = k.name;
    row.layer_type = ClassifyKernelName(k.name);
    row.device = k.device;
    row.stream = k.stream;
    row.duration_ns = k.duration_ns;
    row.duration_source = k.duration_source;
    row.dram_bytes = k.dram_bytes;
    row.flops = k.flops;
    if (k.flops && k.dram_bytes && *k.dram_bytes > 0) {
      row.arithmetic_intensity = *k.flops / *k.dram_bytes;
    }
    row.throughput_pct = k.throughput_pct;
    KernelStalls(k, row);
    if (!k.stall_ratios.empty() && !(k.duration_ns && *k.duration_ns > 0)) ++undated;
  }
  const bool by_duration = undated == 0;
  out.weighting = by_duration
                      ? "duration"
                      : absl::StrFormat("launch (each launch weighs 1: %d launches with stall "
                                        "ratios have no duration)",
                                        undated);

  // The weighted sums per name and layer type: analysis/stalls' one implementation.
  Trace t;
  t.info.format = profile.format;
  absl::flat_hash_map<std::string, LayerType> types;
  for (size_t i = 0; i < profile.kernels.size(); ++i) {
    const NcuKernel& k = profile.kernels[i];
    types[k.name] = out.kernels[i].layer_type;
    for (const auto& [metric, value] : k.stall_ratios) {
      StallSample& s = t.stalls.emplace_back();
      s.function = t.strings.Intern(k.name);
      s.reason = t.strings.Intern(metric);
      s.unit = StallUnit::kPerIssueRatio;
      s.value = value;
      s.weight = by_duration ? *k.duration_ns : 1.0;
    }
  }
  StallSummary sums = SummarizeStalls(t, types);
  absl::flat_hash_map<std::string, StallBreakdown> name_sums;
  for (const KernelStallStats& k : sums.kernels) name_sums[k.name] = k.breakdown;
  std::map<LayerType, StallBreakdown> type_sums;
  for (const LayerTypeStallStats& l : sums.layer_types) type_sums[l.layer_type] = l.breakdown;

  std::map<std::string, GroupAcc> names;
  std::map<LayerType, GroupAcc> layers;
  CoverageAcc file;
  for (const NcuKernelRow& k : out.kernels) {
    bool has = !k.stalls.present.empty();
    for (NcuGroupRow* g : {&names[k.name].row, &layers[k.layer_type].row}) {
      ++g->kernels;
      g->kernels_with_stalls += has ? 1 : 0;
      g->duration_ns += k.duration_ns.value_or(0);
      g->layer_type = k.layer_type;
    }
    names[k.name].row.name = k.name;
    names[k.name].coverage.Add(k.stalls, has);
    layers[k.layer_type].coverage.Add(k.stalls, has);
    file.Add(k.stalls, has);
  }
  StallBreakdown all;
  for (auto& [name, g] : names) {
    g.row.breakdown = name_sums[name];
    all.Add(g.row.breakdown);
    g.row.stalls = g.coverage.Finish(g.row.breakdown, "any launch of this kernel");
    out.kernel_names.push_back(std::move(g.row));
  }
  for (auto& [type, g] : layers) {
    g.row.breakdown = type_sums[type];
    g.row.stalls = g.coverage.Finish(g.row.breakdown, "any kernel of this layer type");
    out.layer_types.push_back(std::move(g.row));
  }
  out.stalls = file.Finish(all, "any kernel in the file");
  auto by_time = [](const NcuGroupRow& a, const NcuGroupRow& b) {
    if (a.duration_ns != b.duration_ns) return a.duration_ns > b.duration_ns;
    if (a.layer_type != b.layer_type) return a.layer_type < b.layer_type;
    return a.name < b.name;
  };
  std::stable_sort(out.kernel_names.begin(), out.kernel_names.end(), by_time);
  std::stable_sort(out.layer_types.begin(), out.layer_types.end(), by_time);
  return out;
}

NcuJoin AttachNcuStalls(const NcuProfile& profile, Trace& trace) {
  NcuJoin j;
  // Launches of each kernel name in start order.
  absl::flat_hash_map<std::string_view, std::vector<size_t>> launches;
  int64_t trace_kernels = 0;
  std::vector<size_t> order;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    if (trace.gpu_events[i].kind == GpuEventKind::kKernel) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return trace.gpu_events[a].start_ns < trace.gpu_events[b].start_ns;
  });
  for (size_t i : order) {
    launches[trace.strings.Get(trace.gpu_events[i].name)].push_back(i);
    ++trace_kernels;
  }
  absl::flat_hash_map<std::string, size_t> seen;  // ncu rows of each name so far
  std::vector<std::pair<size_t, const NcuKernel*>> pairs;
  for (const NcuKernel& k : profile.kernels) {
    ++j.ncu_kernels;
    size_t ordinal = seen[k.name]++;
    auto it = launches.find(std::string_view(k.name));
    if (it == launches.end() || ordinal >= it->second.size()) {
      ++j.ncu_unjoined;
      continue;
    }
    ++j.joined;
    pairs.emplace_back(it->second[ordinal], &k);
  }
  j.trace_kernels_unprofiled = trace_kernels - j.joined;
  // Interning may grow the string table: no string_views into it are used past here.
  launches.clear();
  for (const auto& [event, k] : pairs) {
    const GpuEvent& g = trace.gpu_events[event];
    if (k->dram_bytes || k->flops) {
      trace.measured.push_back({static_cast<int32_t>(event), k->dram_bytes, k->flops});
    }
    for (const auto& [metric, value] : k->stall_ratios) {
      StallSample& s = trace.stalls.emplace_back();
      s.function = g.name;
      s.event = static_cast<int32_t>(event);
      s.reason = trace.strings.Intern(metric);
      s.device = g.device;
      s.unit = StallUnit::kPerIssueRatio;
      s.value = value;
      s.weight = static_cast<double>(g.dur_ns);
      ++j.stall_rows_added;
    }
  }
  return j;
}

}  // namespace opmap::analysis
