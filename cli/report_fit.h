// The workload fit of `opmap report` (--arms KEY, or --fit beside --baseline/--candidate):
// each arm's figures (report_arms.h) plus the dominant bottleneck class per layer type,
// from the arm's sessions exported by the collector as one trace and classified as
// `opmap analyze --report` classifies a trace (analysis/handoff).
#ifndef OPMAP_CLI_REPORT_FIT_H_
#define OPMAP_CLI_REPORT_FIT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/release/fit_matrix.h"
#include "cli/connection_flags.h"
#include "cli/report_arms.h"
#include "cli/report_output.h"

namespace opmap::cli {

// At most this many events of an arm are exported for its classification; a cut export
// says so in the layers' evidence.
inline constexpr uint64_t kFitMaxEvents = 500'000;

absl::StatusOr<analysis::FitArm> FetchFitArm(CollectorChannel& client, const ArmQuery& query);

struct FitReport {
  std::string text;   // in the requested format, with its report marker (kind=fit)
  std::string best;   // the best arm, or "none"
};
// `opmap report --arms KEY`: the fit matrix, the curves, perf per watt per arm, the owner
// and risk map, and each arm's inputs and unavailable figures.
FitReport RenderFitReport(const analysis::FitInputs& inputs, const std::string& key,
                          ReportFormat format);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_FIT_H_
