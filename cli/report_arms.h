// Fills one arm of a release recommendation from a collector: the Query calls for the
// revision's capture windows (request latency per session, with its sketch), the whole
// arm's merged request latency, per-layer operator time, counters, resource versions and
// hosts. The figures themselves are computed by analysis/release/arm_figures.h. Every
// figure the collector can't give is named in Arm::unavailable with the reason.
#ifndef OPMAP_CLI_REPORT_ARMS_H_
#define OPMAP_CLI_REPORT_ARMS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

#include "absl/status/statusor.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"
#include "analysis/release/release_recommendation.h"
#include "cli/connection_flags.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli {

// An arm's selector: the sessions whose `key` is `value`. Keys: revision, host, model,
// or any job label (OPMAP_LABELS, and the agent's gpu_name / power_limit_w /
// driver_version).
struct ArmSelector {
  std::string key = "revision";
  std::string value;
};
// "REV" (a revision) or "KEY=VALUE"; InvalidArgument for an empty key or value.
absl::StatusOr<ArmSelector> ParseArmSelector(std::string_view text);
// The filter with the selector applied; InvalidArgument when the filter already selects
// on that key (e.g. --label gpu_name=X with --arms gpu_name).
absl::StatusOr<opmap::v1::Filter> ArmFilter(const opmap::v1::Filter& base, const ArmSelector& arm);

struct ArmQuery {
  ArmSelector arm;
  opmap::v1::TimeRange range;   // unset: all time
  bool has_range = false;
  opmap::v1::Filter filter;     // the selection with the arm applied (ArmFilter)
  const analysis::WorkloadProfile* profile = nullptr;
  // The envelope for MFU; null with envelope_from_gpu: the built-in one of the GPU the
  // arm's power rows name, when there is exactly one and it is known.
  const analysis::HardwareEnvelope* envelope = nullptr;
  bool envelope_from_gpu = false;
};

struct FetchedArm {
  analysis::Arm arm;
  std::optional<analysis::HardwareEnvelope> envelope;  // the one used, when any
  std::string envelope_source;                          // which, or why none
};

// The gRPC status of a failed call comes back as an absl::Status with the same code and
// "<rpc>: <message> (collector ADDR)".
absl::StatusOr<FetchedArm> FetchArm(CollectorChannel& client, const ArmQuery& query);

// The distinct values of `key` over the selection (revision and host from the request
// rollups, anything else from the sessions' resource records), sorted.
absl::StatusOr<std::vector<std::string>> ArmValues(CollectorChannel& client,
                                                   const opmap::v1::TimeRange* range,
                                                   const opmap::v1::Filter& filter,
                                                   const std::string& key);

// One unary Query call with failover; a failure names the RPC and the collector.
template <typename Fn>
absl::Status CallQuery(CollectorChannel& client, const char* rpc, Fn fn) {
  std::string endpoint;
  grpc::Status s = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return fn(*opmap::v1::Query::NewStub(ch), ctx);
      },
      &endpoint);
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(rpc, ": ", s.error_message(), " (collector ", endpoint, ")"));
}

// The selection's sessions as one Chrome-trace JSON document (ExportTrace), at most
// `max_events` events; `truncated` says whether that cut it.
absl::StatusOr<std::string> ExportTraceJson(CollectorChannel& client, const opmap::v1::ExportTraceRequest& req,
                                            bool* truncated);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_ARMS_H_
