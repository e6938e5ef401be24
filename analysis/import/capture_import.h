// A libopmap_inject capture file (OPMAP_CAPTURE_FILE) as a Trace: records through
// CaptureTraceBuilder; what the capture could not record (CUPTI unavailable, ...) in
// TraceInfo::unavailable; drops and record counts in TraceInfo::counters.
#ifndef OPMAP_ANALYSIS_IMPORT_CAPTURE_IMPORT_H_
#define OPMAP_ANALYSIS_IMPORT_CAPTURE_IMPORT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/import/capture_trace.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

bool LooksLikeCaptureFile(std::string_view head);
absl::StatusOr<Trace> ImportCaptureFile(std::string_view bytes);

// What every reader of captured records reports alike, for a capture file or a live
// window: statuses that are not OK become TraceInfo::unavailable, window marks the trace
// window, and the builder's counts (records, open ranges, bad records, stall rows)
// TraceInfo::counters.
Trace FinishCaptureTrace(CaptureResult r);

// The name a status component (ring::Component) goes by in `unavailable:` lines and
// reports: "nvtx", "cupti", "pc_sampling", "graph_nodes"; "component" for one this build
// does not know.
const char* ComponentName(uint16_t component);

// "drops.ring_full", ... for a ring::DropCause; nullptr for causes not in use.
const char* DropCounterName(int cause);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CAPTURE_IMPORT_H_
