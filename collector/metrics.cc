#include "collector/metrics.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "collector/group_commit.h"
#include "common/metrics/prometheus_text.h"

namespace opmap::collector {

std::string_view RejectionCodeLabel(opmap::v1::RejectionCode code) {
  switch (code) {
    case opmap::v1::REJECTION_CODE_INVALID_VALUE: return "invalid_value";
    case opmap::v1::REJECTION_CODE_COLUMN_LENGTH: return "column_length";
    case opmap::v1::REJECTION_CODE_UNKNOWN_STRING_ID: return "unknown_string_id";
    case opmap::v1::REJECTION_CODE_STRING_TABLE_GAP: return "string_table_gap";
    case opmap::v1::REJECTION_CODE_MISSING_IDENTITY: return "missing_identity";
    case opmap::v1::REJECTION_CODE_TOO_LARGE: return "too_large";
    default: return "unspecified";
  }
}

void CollectorMetrics::AddRejected(opmap::v1::RejectionCode code) {
  int i = static_cast<int>(code);
  if (i < 0 || i >= kRejectionCodes) i = 0;
  rejected_[i].fetch_add(1, std::memory_order_relaxed);
}

int64_t CollectorMetrics::rejected(opmap::v1::RejectionCode code) const {
  int i = static_cast<int>(code);
  if (i < 0 || i >= kRejectionCodes) i = 0;
  return rejected_[i].load(std::memory_order_relaxed);
}

void CollectorMetrics::ObserveCommit(double seconds) {
  size_t b = 0;
  while (b < kCommitBuckets.size() && seconds > kCommitBuckets[b]) ++b;
  commit_buckets_[b].fetch_add(1, std::memory_order_relaxed);
  commit_sum_ns_.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
  commit_count_.fetch_add(1, std::memory_order_relaxed);
}

std::string CollectorMetrics::RenderPrometheus() const {
  metrics::Families f;
  auto counter = [&](const char* name, const char* help, const std::atomic<int64_t>& value) {
    f.Counter(name, help, static_cast<double>(value.load(std::memory_order_relaxed)));
  };
  auto gauge = [&](const char* name, const char* help, const std::atomic<int64_t>& value) {
    f.Gauge(name, help, static_cast<double>(value.load(std::memory_order_relaxed)));
  };
  counter("opmap_collector_batches_total",
          "Batches stored durably (rejected batches are stored without their events).", batches);
  counter("opmap_collector_records_total",
          "Records (kernels, memory ops, launches, ranges) stored.", records);
  counter("opmap_collector_duplicates_total",
          "Batches dropped because their (agent, session, seq) was already stored.", duplicates);
  counter("opmap_collector_out_of_order_total",
          "Batches not stored because a lower seq of their session is missing.", out_of_order);
  counter("opmap_collector_sessions_complete_total",
          "Sessions whose last batch and rollup were stored.", sessions_complete);
  counter("opmap_collector_auth_failures_total",
          "Calls refused for a missing, unknown or insufficient token.", auth_failures);
  counter("opmap_collector_store_errors_total",
          "Store commits that failed (the stream ended UNAVAILABLE).", store_errors);
  counter("opmap_collector_permission_denied_total",
          "Batches refused because their token may not write their agent id.", permission_denied);
  counter("opmap_collector_streams_refused_total",
          "Ingest streams refused over the overall or per-token stream limit.", streams_refused);
  counter("opmap_collector_calls_refused_total",
          "Query calls (exports included) refused over the overall or per-token call limit.",
          calls_refused);
  counter("opmap_collector_calls_timed_out_total",
          "Calls cancelled waiting on their peer: a request body, an export reader, an idle "
          "Ingest stream.",
          calls_timed_out);
  counter("opmap_collector_budget_refusals_total",
          "Batches refused because incomplete sessions held the memory budget.", budget_refusals);
  counter("opmap_collector_sessions_evicted_for_room_total",
          "Incomplete sessions whose in-memory state was dropped (rebuilt from the store on "
          "their next batch) to make room for an older session's batch.",
          sessions_evicted_for_room);
  f.Counter("opmap_collector_request_breakdown_cpu_seconds_total",
            "CPU time spent on the per-request breakdown of completed sessions (tail "
            "explanation); the range nesting it shares with the module attribution excluded.",
            request_breakdown_cpu_ns.load(std::memory_order_relaxed) / 1e9);
  counter("opmap_collector_malformed_messages_total",
          "Ingest messages that did not parse as a Batch (the stream ended INVALID_ARGUMENT).",
          malformed_messages);
  f.Gauge("opmap_collector_store_damaged",
          "1 when an integrity check found the store damaged (ingest stopped).",
          health != nullptr && health->damaged() ? 1 : 0);
  if (committer != nullptr) {
    f.Counter("opmap_collector_group_commits_total",
              "Store transactions of the group commit (each holds one or more batches).",
              static_cast<double>(committer->groups()));
    f.Counter("opmap_collector_group_commit_batches_total",
              "Batches committed through the group commit; divided by group_commits_total, "
              "the mean group size.",
              static_cast<double>(committer->batches()));
  }
  gauge("opmap_collector_ingest_streams",
        "Open Ingest streams (an agent opens one only while it uploads windows).",
        ingest_streams);
  f.Gauge("opmap_collector_agents_active",
          absl::StrFormat("Agent ids that sent a batch in the last %s (at most %d are counted).",
                          absl::FormatDuration(recent_agents.window()), recent_agents.max_ids()),
          static_cast<double>(recent_agents.Count(absl::Now())));
  gauge("opmap_collector_active_sessions", "Sessions held in memory.", active_sessions);
  for (int i = 1; i < kRejectionCodes; ++i) {
    f.Counter("opmap_collector_rejected_total", "Batches rejected as malformed, by rejection code.",
              static_cast<double>(rejected_[i].load(std::memory_order_relaxed)),
              {{"code", std::string(RejectionCodeLabel(static_cast<opmap::v1::RejectionCode>(i)))}});
  }
  if (int64_t n = rejected_[0].load(std::memory_order_relaxed); n != 0) {
    f.Counter("opmap_collector_rejected_total", "Batches rejected as malformed, by rejection code.",
              static_cast<double>(n), {{"code", "unspecified"}});
  }
  std::vector<uint64_t> buckets;
  for (size_t b = 0; b <= kCommitBuckets.size(); ++b) {
    buckets.push_back(static_cast<uint64_t>(commit_buckets_[b].load(std::memory_order_relaxed)));
  }
  f.Histogram("opmap_collector_store_commit_seconds", "Time to commit one batch durably.",
              std::vector<double>(kCommitBuckets.begin(), kCommitBuckets.end()), buckets,
              commit_sum_ns_.load(std::memory_order_relaxed) / 1e9);
  return f.Text();
}

}  // namespace opmap::collector
