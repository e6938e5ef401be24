// Per-kernel hardware metrics from one Nsight Compute export (analysis/import/ncu_importer.h
// fills it; analysis/stalls/ncu_summary.h reads it). Nsight Compute replays each kernel in
// isolation, so its rows carry durations but no timeline: this is a list of profiled
// launches in profile order, not a Trace. Every metric a row may lack is optional —
// absent from the file and "n/a" in the file both read as nullopt, never as 0.
#ifndef OPMAP_ANALYSIS_MODEL_NCU_PROFILE_H_
#define OPMAP_ANALYSIS_MODEL_NCU_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opmap::analysis {

struct NcuKernel {
  int64_t id = 0;  // ncu's "ID" (profile order); the MONAI summary's row index
  std::string name;
  int32_t device = -1;  // -1 = not given
  int64_t stream = -1;
  std::optional<double> duration_ns;
  std::string duration_source;  // metric it came from, e.g. "gpu__time_duration.sum"
  std::optional<double> dram_bytes;   // read + write
  std::optional<double> flops;        // FP add/mul + 2 × fma SASS thread instructions
  // `<x>__throughput.avg.pct_of_peak_sustained_elapsed` metrics, as the file gives them.
  std::vector<std::pair<std::string, double>> throughput_pct;
  // Warp-stall reason as the source spelled it (the full ncu metric name; a summary's
  // reason stem) → warp cycles per issued instruction; analysis/stalls normalizes.
  // Reasons whose value was "n/a" are left out.
  std::vector<std::pair<std::string, double>> stall_ratios;
};

struct NcuProfile {
  // "ncu-raw" (--page raw), "ncu-long" (details page, metrics only), "ncu-details"
  // (details page with the SpeedOfLight section), "monai-summary" (a derived per-kernel
  // table with stall_<reason>_ratio columns).
  std::string format;
  std::vector<NcuKernel> kernels;  // profile order
  // Import notes a reader must see beside the numbers (e.g. "columns ignored: ...").
  std::vector<std::string> notes;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MODEL_NCU_PROFILE_H_
