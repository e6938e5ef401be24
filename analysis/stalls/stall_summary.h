// Memory-stall fraction per kernel and per layer type, as docs/metrics.md defines it:
//   memory-stall fraction  = Σ {long_scoreboard, lg_throttle, tex_throttle, drain, membar,
//                            imc_miss} ÷ Σ all reasons except `selected`
//   on-chip stall fraction = Σ {short_scoreboard, mio_throttle} ÷ the same denominator
// Per layer type the samples of that type's kernels are summed (weighted by samples, not
// by kernel count). Every row counts value × StallSample::weight: the weight is 1 for PC
// samples; for Nsight Compute per-issue ratios it is the launch's duration, so a kernel
// name's and a layer type's fractions are duration-weighted (Σ d·memory ÷ Σ d·stalled
// over their launches) and the per-reason values are duration-weighted sums.
// A kernel's layer type is the one the trace summary gave it (most of its GPU time); a
// function with no captured kernel falls back to the kernel-name rules and is marked
// inferred.
#ifndef OPMAP_ANALYSIS_STALLS_STALL_SUMMARY_H_
#define OPMAP_ANALYSIS_STALLS_STALL_SUMMARY_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/model/trace.h"
#include "analysis/stalls/stall_reasons.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

// Stall evidence summed by class, in the source's unit (samples or per-issue ratios).
struct StallBreakdown {
  double selected = 0;
  double memory = 0;
  double on_chip = 0;
  double other = 0;

  void Add(StallClass c, double value);
  void Add(const StallBreakdown& other);
  double stalled() const { return memory + on_chip + other; }  // all except selected
  // nullopt when nothing stalled (no denominator): never a made-up 0.
  std::optional<double> MemoryFraction() const;
  std::optional<double> OnChipFraction() const;
};

struct KernelStallStats {
  std::string name;
  LayerType layer_type = LayerType::kOther;
  bool layer_type_inferred = false;  // no captured kernel of this name: name rules used
  StallBreakdown breakdown;  // Σ value × weight per class
  // Normalized reason → value, largest first (ties by name).
  std::vector<std::pair<std::string, double>> reasons;
};

struct LayerTypeStallStats {
  LayerType layer_type = LayerType::kOther;
  int64_t kernels = 0;  // distinct functions summed
  StallBreakdown breakdown;
};

// Per module (analysis/summary/modules.h): the rows measured on launches attributed to it.
struct ModuleStallStats {
  std::string module;       // "" = launches outside any module
  std::string module_type;
  int64_t rows = 0;
  StallBreakdown breakdown;
};

struct StallSummary {
  // Non-empty when the trace holds no stall evidence: why, for "unavailable: <reason>".
  std::string unavailable;
  StallUnit unit = StallUnit::kSamples;
  // Rows in a second unit are not mixed into the first: counted here instead.
  int64_t rows_other_unit = 0;
  std::vector<KernelStallStats> kernels;         // stalled value, descending
  std::vector<LayerTypeStallStats> layer_types;  // stalled value, descending
  std::vector<std::string> reasons_present;      // normalized, sorted
  // Filled by the trace summary when rows carry their launch (StallSample::event);
  // otherwise `modules_unavailable` says why.
  std::vector<ModuleStallStats> modules;         // stalled value, descending
  std::string modules_unavailable;
};

// "samples" or "per_issue_ratio".
std::string_view StallUnitName(StallUnit unit);

// `kernel_layer_types` maps kernel name → the layer type the trace summary assigned.
StallSummary SummarizeStalls(const Trace& trace,
                             const absl::flat_hash_map<std::string, LayerType>& kernel_layer_types);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_STALLS_STALL_SUMMARY_H_
