// Memory-stall fractions, DRAM bytes, FLOPs and arithmetic intensity per kernel of one
// Nsight Compute export (analysis/model/ncu_profile.h), and the same fractions per kernel
// name and per layer type. The classification and the sums are analysis/stalls' (one
// classifier, docs/metrics.md): each kernel's ratios become StallSamples weighted by its
// duration and go through SummarizeStalls, so a name's or a layer type's fraction is
//   Σ_launches d·memory ÷ Σ_launches d·stalled      (d = the launch's duration)
// — per-issue ratios are per-launch averages, and a long launch stalls for longer. When a
// kernel with stall ratios has no duration, every launch weighs 1 instead and `weighting`
// says so.
//
// Completeness: Nsight Compute reports 19 reasons (NcuStallReasons). A kernel whose file
// lacks some is "partial: reasons X, Y absent" — its fraction is over the reasons present,
// never presented as complete; names that are not Nsight Compute reasons are counted as
// `other` (like any reason outside docs/metrics.md's memory and on-chip sets) and listed.
//
// AttachNcuStalls joins an export to a Trace: the i-th profiled kernel of a name is the
// i-th launch (by start time) of that name in the trace; joined kernels' ratios are added
// to trace.stalls (kPerIssueRatio, weighted by the trace launch's duration).
#ifndef OPMAP_ANALYSIS_STALLS_NCU_SUMMARY_H_
#define OPMAP_ANALYSIS_STALLS_NCU_SUMMARY_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/model/ncu_profile.h"
#include "analysis/model/trace.h"
#include "analysis/stalls/stall_summary.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

// The reasons Nsight Compute's smsp__average_warps_issue_stalled_<reason>_per_issue_active
// metrics cover (Hopper, ncu 2024/2025; `gmma` exists from sm_90 on), sorted.
std::span<const std::string_view> NcuStallReasons();

// What the stall fields of a row rest on.
struct StallCoverage {
  std::vector<std::string> present;       // normalized reasons with a value, sorted
  std::vector<std::string> missing;       // NcuStallReasons() not present, sorted
  std::vector<std::string> unrecognized;  // present but not an Nsight Compute reason
  // "complete", "partial: reasons X, Y absent", or "unavailable: <reason>".
  std::string status;
};

struct NcuKernelRow {
  int64_t id = 0;
  std::string name;
  LayerType layer_type = LayerType::kOther;  // kernel-name rules (no operators in ncu)
  int32_t device = -1;
  int64_t stream = -1;
  std::optional<double> duration_ns;
  std::string duration_source;
  std::optional<double> dram_bytes;
  std::optional<double> flops;
  std::optional<double> arithmetic_intensity;  // flops ÷ dram_bytes
  std::vector<std::pair<std::string, double>> throughput_pct;
  StallBreakdown breakdown;  // this launch's ratios by class (unweighted)
  StallCoverage stalls;
};

// A kernel name's or a layer type's launches.
struct NcuGroupRow {
  std::string name;  // kernel name; empty for layer-type rows
  LayerType layer_type = LayerType::kOther;
  int64_t kernels = 0;              // profiled launches
  int64_t kernels_with_stalls = 0;  // of those, with stall ratios (in the fractions)
  double duration_ns = 0;           // Σ of known durations
  StallBreakdown breakdown;         // weighted sums (see the header comment)
  StallCoverage stalls;             // union of its launches' missing reasons
};

struct NcuSummary {
  std::string format;
  std::vector<std::string> notes;
  std::string weighting;  // "duration", or "launch (…)" when durations are missing
  StallCoverage stalls;   // over the whole file
  std::vector<NcuKernelRow> kernels;     // file order
  std::vector<NcuGroupRow> kernel_names; // by duration, descending
  std::vector<NcuGroupRow> layer_types;  // by duration, descending
};

NcuSummary SummarizeNcu(const NcuProfile& profile);

struct NcuJoin {
  int64_t ncu_kernels = 0;
  int64_t joined = 0;
  int64_t ncu_unjoined = 0;            // no launch of that name and ordinal in the trace
  int64_t trace_kernels_unprofiled = 0; // trace kernel launches no ncu row joined
  int64_t stall_rows_added = 0;        // StallSamples appended to trace.stalls
};

NcuJoin AttachNcuStalls(const NcuProfile& profile, Trace& trace);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_STALLS_NCU_SUMMARY_H_
