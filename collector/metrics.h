// Collector self-metrics: atomic counters and a commit-latency histogram, rendered in
// the Prometheus text exposition format (0.0.4). common/metrics/metrics_server.h serves them.
#ifndef OPMAP_COLLECTOR_METRICS_H_
#define OPMAP_COLLECTOR_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "collector/recent_agents.h"
#include "collector/store_health.h"
#include "opmap/v1/ingest.pb.h"

namespace opmap::collector {

class GroupCommitter;

class CollectorMetrics {
 public:
  // Upper bounds (seconds) of the store-commit histogram buckets; +Inf is implicit.
  static constexpr std::array<double, 12> kCommitBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};
  static constexpr int kRejectionCodes = 7;  // RejectionCode values 0..6

  std::atomic<int64_t> batches{0};            // batches stored (incl. stored rejections)
  std::atomic<int64_t> records{0};            // records stored
  std::atomic<int64_t> duplicates{0};         // batches dropped as already stored
  std::atomic<int64_t> out_of_order{0};       // batches held back: a lower seq is missing
  std::atomic<int64_t> sessions_complete{0};
  std::atomic<int64_t> auth_failures{0};      // calls refused by the token check
  std::atomic<int64_t> store_errors{0};       // failed commits (streams ended UNAVAILABLE)
  std::atomic<int64_t> permission_denied{0};  // batches for an agent id the token may not write
  std::atomic<int64_t> streams_refused{0};    // streams over the overall or per-token limit
  std::atomic<int64_t> calls_refused{0};      // Query calls over their overall or per-token limit
  std::atomic<int64_t> calls_timed_out{0};    // calls cut off waiting on their peer (watchdog)
  std::atomic<int64_t> budget_refusals{0};    // batches refused: incomplete-session budget spent
  std::atomic<int64_t> sessions_evicted_for_room{0};  // held sessions dropped for an older one
  std::atomic<int64_t> request_breakdown_cpu_ns{0};   // thread CPU of sessions' request breakdowns
  std::atomic<int64_t> malformed_messages{0}; // stream messages that do not parse as a Batch
  std::atomic<int64_t> ingest_streams{0};     // open Ingest streams (gauge)
  std::atomic<int64_t> active_sessions{0};    // sessions held in memory (gauge)
  // Agent ids that sent a batch in the last 5 minutes (5 of the agent's default 60 s
  // cadences), at most 100,000: opmap_collector_agents_active.
  RecentAgents recent_agents{absl::Minutes(5), 100'000};

  void AddRejected(opmap::v1::RejectionCode code);
  int64_t rejected(opmap::v1::RejectionCode code) const;
  void ObserveCommit(double seconds);

  std::string RenderPrometheus() const;

  // Rendered as opmap_collector_store_damaged (null: never damaged).
  const StoreHealth* health = nullptr;
  // Rendered as opmap_collector_group_commits_total / _group_commit_batches_total (null:
  // no group commit).
  const GroupCommitter* committer = nullptr;

 private:
  std::array<std::atomic<int64_t>, kRejectionCodes> rejected_{};
  std::array<std::atomic<int64_t>, kCommitBuckets.size() + 1> commit_buckets_{};
  std::atomic<int64_t> commit_count_{0};
  std::atomic<int64_t> commit_sum_ns_{0};
};

// Lower-case label value of a rejection code: "invalid_value", "too_large", ...
std::string_view RejectionCodeLabel(opmap::v1::RejectionCode code);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_METRICS_H_
