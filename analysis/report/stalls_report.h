// Rendering of the memory-stall summary (analysis/stalls/stall_summary.h) and of the
// per-launch list (TraceSummary::launches) for `opmap analyze`'s JSON, table and CSV.
#ifndef OPMAP_ANALYSIS_REPORT_STALLS_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_STALLS_REPORT_H_

#include <string>
#include <vector>

#include "common/text/json_writer.h"
#include "analysis/stalls/stall_summary.h"
#include "analysis/summary/trace_summary.h"

namespace opmap::analysis {

// Adds "stalls": {...} to the open object: {"unavailable": reason} when there is no stall
// evidence, else unit, reasons present, and per-kernel / per-layer-type fractions
// (null where nothing stalled); `top` kernel rows (0 = all).
void StallsJson(text::JsonWriter& w, const StallSummary& s, int top);
// "memory stalls: unavailable: <reason>" or a per-layer-type and per-kernel table.
std::string StallsTable(const StallSummary& s, int top);
// CSV rows: section stall_layer_type and stall_kernel (share = memory-stall fraction).
std::string StallsCsv(const StallSummary& s, const std::string& file_field, int top);

// Adds "launches": [...] (one object per GPU event, trace order) to the open object.
void LaunchesJson(text::JsonWriter& w, const std::vector<LaunchRow>& launches);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_STALLS_REPORT_H_
