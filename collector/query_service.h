// The Query service: latency percentiles, per-device time breakdown, top kernels and
// counters (answered by the Store over rollups and per-session sums), and ExportTrace (raw batches of the selected
// sessions re-assembled and rendered as Chrome-trace JSON, streamed in chunks ≤ 1 MiB).
// Every call needs a token with role analyst or admin.
#ifndef OPMAP_COLLECTOR_QUERY_SERVICE_H_
#define OPMAP_COLLECTOR_QUERY_SERVICE_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collector/auth.h"
#include "collector/call_admission.h"
#include "collector/call_watchdog.h"
#include "collector/metrics.h"
#include "collector/store/store.h"
#include "collector/store_health.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::collector {

struct QueryOptions {
  uint64_t default_max_events = 1'000'000;  // ExportTrace max_events == 0
  uint64_t max_events_limit = 50'000'000;   // larger requests are refused
  size_t chunk_bytes = 1 << 20;             // TraceChunk.data at most
  StoreHealth* health = nullptr;            // damaged: every query answers DATA_LOSS
  // Calls in progress (ExportTrace counts as a query and as an export), in all and per
  // token; more are refused RESOURCE_EXHAUSTED at once (call_admission.h).
  int64_t max_queries = 32;
  int64_t max_queries_per_token = 8;
  int64_t max_exports = 4;
  int64_t max_exports_per_token = 2;
  // Cancels a call whose request does not arrive within request_body_timeout, or whose
  // export reader does not take a chunk within write_timeout. Null: no deadlines.
  CallWatchdog* watchdog = nullptr;
  absl::Duration request_body_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(30);
};

// Checks a request's time range: unset (0/0) means everything; otherwise end > start.
absl::Status ValidateTimeRange(const opmap::v1::TimeRange& range, bool has_range);

// ExportTrace without gRPC: calls `write` with each chunk in order (the last has
// last = true, events, truncated); stops early when it returns false.
absl::Status ExportTraceChunks(Store& store, const opmap::v1::ExportTraceRequest& request,
                               const QueryOptions& options,
                               const std::function<bool(const opmap::v1::TraceChunk&)>& write);

class QueryService final : public opmap::v1::Query::Service {
 public:
  QueryService(Store* store, const Authenticator* auth, CollectorMetrics* metrics,
               QueryOptions options = {});

  grpc::Status LatencyPercentiles(grpc::ServerContext* context,
                                  const opmap::v1::LatencyRequest* request,
                                  opmap::v1::LatencyResponse* response) override;
  grpc::Status TimeBreakdown(grpc::ServerContext* context,
                             const opmap::v1::TimeBreakdownRequest* request,
                             opmap::v1::TimeBreakdownResponse* response) override;
  grpc::Status TopKernels(grpc::ServerContext* context, const opmap::v1::TopKernelsRequest* request,
                          opmap::v1::TopKernelsResponse* response) override;
  grpc::Status Counters(grpc::ServerContext* context, const opmap::v1::CountersRequest* request,
                        opmap::v1::CountersResponse* response) override;
  grpc::Status Power(grpc::ServerContext* context, const opmap::v1::PowerRequest* request,
                     opmap::v1::PowerResponse* response) override;
  grpc::Status ExportTrace(grpc::ServerContext* context,
                           const opmap::v1::ExportTraceRequest* request,
                           grpc::ServerWriter<opmap::v1::TraceChunk>* writer) override;
  grpc::Status RecordSignoff(grpc::ServerContext* context, const opmap::v1::Signoff* request,
                             opmap::v1::RecordSignoffResponse* response) override;
  grpc::Status ListSignoffs(grpc::ServerContext* context,
                            const opmap::v1::ListSignoffsRequest* request,
                            opmap::v1::ListSignoffsResponse* response) override;

 private:
  grpc::Status Authorize(grpc::ServerContext* context, Principal* principal = nullptr);

  Store* store_;
  const Authenticator* auth_;
  CollectorMetrics* metrics_;
  QueryOptions options_;
  CallAdmission queries_;
  CallAdmission exports_;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_QUERY_SERVICE_H_
