// Warp-stall reason names → the classes docs/metrics.md ("Memory-stall fraction by layer type")
// counts. CUPTI reports names at run time (cuptiPCSamplingGetStallReasons), with a
// `smsp__pcsamp_warps_issue_stalled_` prefix and `_not_issued` variants; Nsight Compute
// spells them `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`. All
// of those normalize to the bare reason ("long_scoreboard") before classification.
#ifndef OPMAP_ANALYSIS_STALLS_STALL_REASONS_H_
#define OPMAP_ANALYSIS_STALLS_STALL_REASONS_H_

#include <string>
#include <string_view>

namespace opmap::analysis {

enum class StallClass : uint8_t {
  kSelected = 0,  // the warp issued: not a stall, excluded from the denominator
  kMemory = 1,    // long_scoreboard, lg_throttle, tex_throttle, drain, membar, imc_miss
  kOnChip = 2,    // short_scoreboard, mio_throttle
  kOther = 3,     // every other reason (math pipe, barrier, branch, wait, ...)
};

// "selected", "memory", "on_chip", "other".
std::string_view StallClassName(StallClass c);

// Lower-cased bare reason: prefixes and suffixes of CUPTI and Nsight Compute stripped,
// `_not_issued` folded into the reason it qualifies.
std::string NormalizeStallReason(std::string_view name);

// Class of an already normalized reason.
StallClass ClassifyStallReason(std::string_view normalized);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_STALLS_STALL_REASONS_H_
