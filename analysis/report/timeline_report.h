// Rendering of the idle-time categories and launch statistics (analysis/timeline) for
// `opmap analyze`'s JSON and table output.
#ifndef OPMAP_ANALYSIS_REPORT_TIMELINE_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_TIMELINE_REPORT_H_

#include <string>
#include <vector>

#include "common/text/json_writer.h"
#include "analysis/timeline/idle_time.h"
#include "analysis/timeline/launch_stats.h"

namespace opmap::analysis {

// Adds "idle_time": [...] and "launch_stats": {...} to the open object.
void TimelineJson(text::JsonWriter& w, const std::vector<StreamIdleTime>& idle,
                  const LaunchStatsSummary& launch);
std::string TimelineTable(const std::vector<StreamIdleTime>& idle,
                          const LaunchStatsSummary& launch);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_TIMELINE_REPORT_H_
