// Rendering of the host-range summary (analysis/summary/host_ranges.h) and of what the
// source said it could not record (TraceInfo::unavailable, TraceInfo::counters), for
// `opmap analyze`'s JSON, table and CSV output.
#ifndef OPMAP_ANALYSIS_REPORT_HOST_RANGES_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_HOST_RANGES_REPORT_H_

#include <string>

#include "analysis/model/trace.h"
#include "common/text/json_writer.h"
#include "analysis/summary/host_ranges.h"

namespace opmap::analysis {

// Adds "unavailable": [{"what", "reason"}] and "source_counters": {name: n} to the open
// object.
void SourceFactsJson(text::JsonWriter& w, const TraceInfo& info);
// "unavailable: <what>: <reason>" lines and the counters, or "" when there are none.
std::string SourceFactsTable(const TraceInfo& info);

// Adds "host_ranges": {...} to the open object; `top` rows of ranges (0 = all).
void HostRangesJson(text::JsonWriter& w, const HostRangeSummary& s, int top);
std::string HostRangesTable(const HostRangeSummary& s, int top);
// CSV rows in analyze's long format: section host_layer_type and host_range.
std::string HostRangesCsv(const HostRangeSummary& s, const std::string& file_field, int top);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_HOST_RANGES_REPORT_H_
