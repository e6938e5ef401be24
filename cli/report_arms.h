// Fills one arm of a release recommendation from a collector: the Query calls for the
// revision's capture windows (request latency per session, with its sketch), the whole
// arm's merged request latency, per-layer operator time, counters, resource versions and
// hosts. The figures themselves are computed by analysis/release/arm_figures.h. Every
// figure the collector can't give is named in Arm::unavailable with the reason.
#ifndef OPMAP_CLI_REPORT_ARMS_H_
#define OPMAP_CLI_REPORT_ARMS_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/profile/workload_profile.h"
#include "analysis/release/release_recommendation.h"
#include "cli/grpc_client.h"
#include "opmap/v1/query.pb.h"

namespace opmap::cli {

struct ArmQuery {
  std::string revision;
  opmap::v1::TimeRange range;   // unset: all time
  bool has_range = false;
  opmap::v1::Filter filter;     // host/model/labels; revision is set from `revision`
  const analysis::WorkloadProfile* profile = nullptr;
  const analysis::HardwareEnvelope* envelope = nullptr;
};

// The gRPC status of a failed call comes back as an absl::Status with the same code and
// "<rpc>: <message> (collector ADDR)".
absl::StatusOr<analysis::Arm> FetchArm(CollectorChannel& client, const ArmQuery& query);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_ARMS_H_
