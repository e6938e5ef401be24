#include "analysis/stalls/stall_summary.h"

#include <algorithm>
#include <map>

#include "absl/container/btree_set.h"

namespace opmap::analysis {
namespace {

std::string WhyNoStalls(const TraceInfo& info) {
  if (info.format == "kineto-json") {
    return "PyTorch-profiler (Kineto) traces carry no warp-stall reasons";
  }
  if (info.format == "nsys-sqlite") {
    return "Nsight Systems exports carry no warp-stall reasons (an Nsight Compute export "
           "does)";
  }
  if (info.format == "opmap-capture") {
    return "the capture holds no PC-sampling records (stall sampling was off: "
           "OPMAP_STALLS=1 or attach --stalls; or CUPTI was unavailable)";
  }
  return "the source holds no warp-stall samples";
}

template <typename Row>
void SortByStalled(std::vector<Row>& rows, auto key) {
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (a.breakdown.stalled() != b.breakdown.stalled()) {
      return a.breakdown.stalled() > b.breakdown.stalled();
    }
    return key(a) < key(b);
  });
}

}  // namespace

void StallBreakdown::Add(StallClass c, double value) {
  switch (c) {
    case StallClass::kSelected: selected += value; break;
    case StallClass::kMemory: memory += value; break;
    case StallClass::kOnChip: on_chip += value; break;
    case StallClass::kOther: other += value; break;
  }
}

void StallBreakdown::Add(const StallBreakdown& o) {
  selected += o.selected;
  memory += o.memory;
  on_chip += o.on_chip;
  other += o.other;
}

std::optional<double> StallBreakdown::MemoryFraction() const {
  if (stalled() <= 0) return std::nullopt;
  return memory / stalled();
}

std::optional<double> StallBreakdown::OnChipFraction() const {
  if (stalled() <= 0) return std::nullopt;
  return on_chip / stalled();
}

std::string_view StallUnitName(StallUnit unit) {
  return unit == StallUnit::kPerIssueRatio ? "per_issue_ratio" : "samples";
}

StallSummary SummarizeStalls(
    const Trace& trace, const absl::flat_hash_map<std::string, LayerType>& kernel_layer_types) {
  StallSummary out;
  if (trace.stalls.empty()) {
    out.unavailable = WhyNoStalls(trace.info);
    return out;
  }
  out.unit = trace.stalls.front().unit;
  struct Acc {
    StallBreakdown breakdown;
    std::map<std::string, double> reasons;
  };
  std::map<std::string, Acc> by_function;  // ordered: deterministic output
  absl::btree_set<std::string> present;
  for (const StallSample& s : trace.stalls) {
    if (s.unit != out.unit) {
      ++out.rows_other_unit;
      continue;
    }
    std::string reason = NormalizeStallReason(trace.strings.Get(s.reason));
    Acc& acc = by_function[std::string(trace.strings.Get(s.function))];
    acc.breakdown.Add(ClassifyStallReason(reason), s.value * s.weight);
    acc.reasons[reason] += s.value * s.weight;
    present.insert(std::move(reason));
  }
  std::map<LayerType, LayerTypeStallStats> by_layer;
  for (auto& [name, acc] : by_function) {
    KernelStallStats k;
    k.name = name;
    if (auto it = kernel_layer_types.find(name); it != kernel_layer_types.end()) {
      k.layer_type = it->second;
    } else {
      k.layer_type = ClassifyKernelName(name);
      k.layer_type_inferred = true;
    }
    k.breakdown = acc.breakdown;
    k.reasons.assign(acc.reasons.begin(), acc.reasons.end());
    std::stable_sort(k.reasons.begin(), k.reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    LayerTypeStallStats& l = by_layer[k.layer_type];
    l.layer_type = k.layer_type;
    ++l.kernels;
    l.breakdown.Add(k.breakdown);
    out.kernels.push_back(std::move(k));
  }
  for (auto& [type, row] : by_layer) out.layer_types.push_back(row);
  SortByStalled(out.kernels, [](const KernelStallStats& k) { return k.name; });
  SortByStalled(out.layer_types,
                [](const LayerTypeStallStats& l) { return static_cast<int>(l.layer_type); });
  out.reasons_present.assign(present.begin(), present.end());
  return out;
}

}  // namespace opmap::analysis
