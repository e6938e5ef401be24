#include "collector/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help,
                    const std::atomic<int64_t>& value) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name,
                    " ", value.load(std::memory_order_relaxed), "\n");
  };
  metric("opmap_collector_batches_total", "counter",
         "Batches stored durably (rejected batches are stored without their events).", batches);
  metric("opmap_collector_records_total", "counter",
         "Records (kernels, memory ops, launches, ranges) stored.", records);
  metric("opmap_collector_duplicates_total", "counter",
         "Batches dropped because their (agent, session, seq) was already stored.", duplicates);
  metric("opmap_collector_out_of_order_total", "counter",
         "Batches not stored because a lower seq of their session is missing.", out_of_order);
  metric("opmap_collector_sessions_complete_total", "counter",
         "Sessions whose last batch and rollup were stored.", sessions_complete);
  metric("opmap_collector_auth_failures_total", "counter",
         "Calls refused for a missing, unknown or insufficient token.", auth_failures);
  metric("opmap_collector_store_errors_total", "counter",
         "Store commits that failed (the stream ended UNAVAILABLE).", store_errors);
  metric("opmap_collector_permission_denied_total", "counter",
         "Batches refused because their token may not write their agent id.", permission_denied);
  metric("opmap_collector_streams_refused_total", "counter",
         "Ingest streams refused over the overall or per-token stream limit.", streams_refused);
  metric("opmap_collector_calls_refused_total", "counter",
         "Query calls (exports included) refused over the overall or per-token call limit.",
         calls_refused);
  metric("opmap_collector_calls_timed_out_total", "counter",
         "Calls cancelled waiting on their peer: a request body, an export reader, an idle "
         "Ingest stream.",
         calls_timed_out);
  metric("opmap_collector_budget_refusals_total", "counter",
         "Batches refused because incomplete sessions held the memory budget.", budget_refusals);
  metric("opmap_collector_malformed_messages_total", "counter",
         "Ingest messages that did not parse as a Batch (the stream ended INVALID_ARGUMENT).",
         malformed_messages);
  absl::StrAppend(&out,
                  "# HELP opmap_collector_store_damaged 1 when an integrity check found the store "
                  "damaged (ingest stopped).\n# TYPE opmap_collector_store_damaged gauge\n"
                  "opmap_collector_store_damaged ",
                  health != nullptr && health->damaged() ? 1 : 0, "\n");
  metric("opmap_collector_ingest_streams", "gauge", "Open Ingest streams.", ingest_streams);
  metric("opmap_collector_active_sessions", "gauge", "Sessions held in memory.",
         active_sessions);

  absl::StrAppend(&out,
                  "# HELP opmap_collector_rejected_total Batches rejected as malformed, by "
                  "rejection code.\n# TYPE opmap_collector_rejected_total counter\n");
  for (int i = 1; i < kRejectionCodes; ++i) {
    absl::StrAppend(&out, "opmap_collector_rejected_total{code=\"",
                    std::string(RejectionCodeLabel(static_cast<opmap::v1::RejectionCode>(i))), "\"} ",
                    rejected_[i].load(std::memory_order_relaxed), "\n");
  }
  if (int64_t n = rejected_[0].load(std::memory_order_relaxed); n != 0) {
    absl::StrAppend(&out, "opmap_collector_rejected_total{code=\"unspecified\"} ", n, "\n");
  }

  absl::StrAppend(&out,
                  "# HELP opmap_collector_store_commit_seconds Time to commit one batch "
                  "durably.\n# TYPE opmap_collector_store_commit_seconds histogram\n");
  int64_t cumulative = 0;
  for (size_t b = 0; b <= kCommitBuckets.size(); ++b) {
    cumulative += commit_buckets_[b].load(std::memory_order_relaxed);
    std::string le = b < kCommitBuckets.size() ? absl::StrFormat("%g", kCommitBuckets[b]) : "+Inf";
    absl::StrAppend(&out, "opmap_collector_store_commit_seconds_bucket{le=\"", le, "\"} ",
                    cumulative, "\n");
  }
  absl::StrAppendFormat(&out, "opmap_collector_store_commit_seconds_sum %.9f\n",
                        commit_sum_ns_.load(std::memory_order_relaxed) / 1e9);
  absl::StrAppend(&out, "opmap_collector_store_commit_seconds_count ",
                  commit_count_.load(std::memory_order_relaxed), "\n");
  return out;
}

}  // namespace opmap::collector
