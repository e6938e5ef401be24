// Rendering of an Nsight Compute summary (analysis/stalls/ncu_summary.h) for
// `opmap analyze --ncu`: the JSON object documented in docs/analyze-json.md ("Nsight
// Compute exports"), an aligned table, and a CSV table of its own. Strings, no I/O.
#ifndef OPMAP_ANALYSIS_REPORT_NCU_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_NCU_REPORT_H_

#include <optional>
#include <string>

#include "analysis/stalls/ncu_summary.h"

namespace opmap::analysis {

struct NcuReportOptions {
  std::string file;  // the path given on the command line
  int top = 0;       // kernel and kernel-name rows to show; 0 = all
  // Set when the export was joined to a trace: its path and the counts.
  std::string joined_trace;
  std::optional<NcuJoin> join;
};

// {"ncu": {...}} on one line.
std::string RenderNcuJson(const NcuSummary& s, const NcuReportOptions& options);
std::string RenderNcuTable(const NcuSummary& s, const NcuReportOptions& options);
// Header: file,section,id,name,layer_type,kernels,duration_us,memory_stall_fraction,
// on_chip_stall_fraction,stall_status,dram_bytes,flops,arithmetic_intensity
// (section: ncu_layer_type, ncu_kernel_name, ncu_kernel).
std::string RenderNcuCsv(const NcuSummary& s, const NcuReportOptions& options, bool with_header);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_NCU_REPORT_H_
