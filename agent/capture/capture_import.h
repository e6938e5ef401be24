// A libopmap_inject capture file (OPMAP_CAPTURE_FILE) as a Trace: records through
// CaptureTraceBuilder; what the capture could not record (CUPTI unavailable, ...) in
// TraceInfo::unavailable; drops and record counts in TraceInfo::counters.
#ifndef OPMAP_AGENT_CAPTURE_CAPTURE_IMPORT_H_
#define OPMAP_AGENT_CAPTURE_CAPTURE_IMPORT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/model/trace.h"

namespace opmap::capture {

bool LooksLikeCaptureFile(std::string_view head);
absl::StatusOr<analysis::Trace> ImportCaptureFile(std::string_view bytes);

}  // namespace opmap::capture

#endif  // OPMAP_AGENT_CAPTURE_CAPTURE_IMPORT_H_
