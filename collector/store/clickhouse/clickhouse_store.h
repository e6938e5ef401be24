// The ClickHouse Store ("clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&cluster=NAME"), for
// collectors that scale out: any number of stateless collector replicas share one store,
// and a batch resent to any of them is stored once. Written for ClickHouse 18.16 over its
// HTTP interface (collector/clickhouse/http_client.h).
//
// Tables (in DB; created at open, idempotently, ON CLUSTER when the URL names a cluster;
// the schema version is in opmap_meta and a newer one is refused):
//   batches(agent, session, seq, last, day, window_start_ns, window_end_ns, records,
//           string_count_after, host, model, revision, label_keys, label_values, payload)
//       one row per agent batch, its serialized payload as sent. PARTITION BY day (the
//       batch's capture day, yyyymmdd of its window) so retention drops partitions.
//   rollups(agent, session, subject, ordinal, layer_type, operator, kernel, module,
//           module_type, host, revision, count, sum_ns, min_ns, max_ns, sketch_scale,
//           sketch_offset, sketch_zero, sketch_count, sketch_sum, sketch_min, sketch_max,
//           sketch_bins Array(UInt64))      merged server-side with sumMap (exact)
//   device_times, session_counters, session_drops, session_unavailable: as in SQLite,
//           keyed by (agent, session)
//   sessions(agent, session, last_seq, string_count, host, model, revision, labels,
//            window_start_ns, window_end_ns, gpu totals, bucketed, bucket_ns)   one row
//            per COMPLETE session: written last, it is the marker that the session's
//            rollup is stored
//   rollup_buckets(subject, bucket_ns, model, revision, host, labels, layer_type,
//            operator, kernel, module, module_type; aggregate states)   (v2) pre-merged
//            rollups: per bucket of kRollupBucketNs and key, the rollup rows of every
//            session bucketed there (collector/store/rollup_buckets.h), merged by an
//            AggregatingMergeTree. Queries read these instead of per-session rows for the
//            buckets wholly inside their range (clickhouse_buckets.cc)
//   events(day, agent, session, resource, kind, start/end/duration, name, operator,
//            layer_type, module, rule, device, stream, correlation, grid, block, request)
//            (v2) every GPU event, host range and launch call of a complete session as
//            mapped (analysis/summary/event_rows.h), for analysts' SQL (docs/scale-out.md).
//            One INSERT per session, written at completion. PARTITION BY day.
//   signoffs(report_sha256, kind, baseline, candidate, verdict, owner, role, signed_ns,
//            principal)
// With a cluster, each is a ReplicatedMergeTree table `<name>_local`
// ('/clickhouse/tables/{shard}/DB/<name>_local', '{replica}') behind a Distributed table
// `<name>` sharded by cityHash64(agent) (signoffs: by report hash), so one session lives on
// one shard. Without a cluster: plain MergeTree tables on one server.
//
// Exactly once. Every INSERT is the rows of one agent batch (or of one session's rollup,
// one table at a time), written in RowBinary in a fixed column and row order, with nothing
// that depends on the receiving collector (no receive time): the same batch gives the same
// bytes on every replica, so ClickHouse's insert-block deduplication
// (ReplicatedMergeTree, window `replicated_deduplication_window` of the servers) drops a
// resend that reaches any collector replica, even concurrently. Inserts go with
// insert_distributed_sync=1: CommitBatch returns only after every shard answered 200.
// A batch the caller knows to follow the stored session directly (BatchCommit::
// follows_stored: the ingest service read the session and committed every batch since)
// is inserted without a read: a concurrent resend through another collector is the same
// bytes and block deduplication drops it; an older resend is below the caller's
// last_seq. Any other batch, and every session's last one, is checked first (whether its
// seq is stored), so a resend outside the dedup window is still a duplicate. A session's
// last batch is inserted first, then its rollup tables, events and bucket rows, then the
// sessions row: a failure in between leaves a session that is not complete, whose last
// batch GetSession does not count (last_seq stays below it), so the resend redoes the
// rest and the repeated inserts are dropped as duplicates. Until that resend, the bucket
// rows of such a session may already count in queries over its bucket.
// WITHOUT a cluster (plain MergeTree) nothing deduplicates: the read-before-insert makes a
// single collector exactly once, but two collector replicas racing on the same batch can
// both store it. Scale-out needs `cluster=`.
//
// Collector replicas are stateless: GetSession reads last_seq / string_count / complete
// from the tables (the sessions row of a complete session, else the highest stored seq).
//
// Retention (ExpireRawBefore): ALTER ... DELETE is a heavy mutation on 18.16, so raw batches
// are dropped a whole partition (capture day) at a time: days that end before the cutoff
// and hold batches of complete sessions only (a day with an open session is kept whole),
// and the `events` of every day before the cutoff (only complete sessions have events).
// The cutoff is thus compared with capture time, not receive time, at day granularity.
//
// Reads go to the replicas in order (load_balancing=in_order), the replica inserts go to,
// so a collector reads what it just wrote while that replica is up.
//
// Thread safety: safe for concurrent use; each call takes an HTTP client from a pool.
#ifndef OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_STORE_H_
#define OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_STORE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collector/clickhouse/http_client.h"
#include "collector/store/query_common.h"
#include "collector/store/store.h"

namespace opmap::collector {

class ClickHouseStore final : public Store {
 public:
  // v2: rollup_buckets, events, sessions.bucketed/bucket_ns (a v1 database is migrated).
  static constexpr int kSchemaVersion = 2;
  // The width of a new database's rollup buckets unless its URL says rollup_bucket_ns=
  // (kept in opmap_meta; SQLite's default).
  static constexpr int64_t kRollupBucketNs = int64_t{3600} * 1'000'000'000;

  // Parses the URL, creates the database and schema (or checks an existing one).
  // InvalidArgument for a bad URL; Unavailable when no server answers;
  // FailedPrecondition for a newer schema version.
  static absl::StatusOr<std::unique_ptr<ClickHouseStore>> Open(std::string_view url);

  absl::StatusOr<SessionState> GetSession(std::string_view agent_id,
                                          std::string_view session_id) override;
  absl::StatusOr<CommitOutcome> CommitBatch(const BatchCommit& commit) override;
  absl::StatusOr<std::vector<std::string>> LoadSessionPayloads(
      std::string_view agent_id, std::string_view session_id) override;
  absl::StatusOr<opmap::v1::LatencyResponse> QueryLatency(
      const opmap::v1::LatencyRequest& request) override;
  absl::StatusOr<opmap::v1::TimeBreakdownResponse> QueryTimeBreakdown(
      const opmap::v1::TimeBreakdownRequest& request) override;
  absl::StatusOr<opmap::v1::TopKernelsResponse> QueryTopKernels(
      const opmap::v1::TopKernelsRequest& request) override;
  absl::StatusOr<opmap::v1::CountersResponse> QueryCounters(
      const opmap::v1::CountersRequest& request) override;
  absl::StatusOr<opmap::v1::PowerResponse> QueryPower(
      const opmap::v1::PowerRequest& request) override;
  absl::Status ForEachBatch(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
                            const std::function<absl::Status(std::string_view)>& visit) override;
  absl::StatusOr<int64_t> ExpireRawBefore(int64_t cutoff_ns) override;
  absl::StatusOr<SignoffOutcome> RecordSignoff(const opmap::v1::Signoff& signoff) override;
  absl::StatusOr<std::vector<opmap::v1::Signoff>> ListSignoffs(
      const opmap::v1::ListSignoffsRequest& request) override;
  StoreStats Stats() override;

  const std::string& database() const { return database_; }
  const std::string& cluster() const { return cluster_; }

  // Runs one statement (tests and tools: e.g. DROP DATABASE); returns the body.
  absl::StatusOr<std::string> Execute(std::string_view sql);

 private:
  ClickHouseStore(clickhouse::ClientOptions options, std::string database, std::string cluster,
                  int64_t new_bucket_ns)
      : options_(std::move(options)), database_(std::move(database)),
        cluster_(std::move(cluster)), new_bucket_ns_(new_bucket_ns) {}

  // Schema (clickhouse_schema.cc).
  absl::Status SetUpSchema();
  struct Meta {
    int64_t version = 0;    // 0: no schema yet
    int64_t bucket_ns = 0;  // 0: unset (v1)
  };
  absl::StatusOr<Meta> ReadMeta();
  absl::Status AddSessionBucketColumns();
  // "DB.name": the table queries and inserts use (the Distributed one with a cluster).
  std::string Table(std::string_view name) const;
  // " ON CLUSTER name" or "".
  std::string OnCluster() const;
  // "GLOBAL IN" with a cluster (the set is built once and sent to the shards), else "IN".
  const char* In() const { return cluster_.empty() ? "IN" : "GLOBAL IN"; }

  absl::StatusOr<std::string> Query(std::string_view sql);
  // ALTER TABLE ... DROP PARTITION `day` of a day-partitioned table, on every replica.
  absl::Status DropDay(std::string_view table, uint32_t day);
  absl::Status Insert(std::string_view table, std::string_view columns, std::string_view rows);

  // Ingest helpers (clickhouse_store.cc / clickhouse_rollup_insert.cc).
  absl::Status InsertRollup(const opmap::v1::Batch& batch, const BatchCommit& commit,
                            int64_t window_start_ns, int64_t window_end_ns);
  // The session's rows merged into its bucket (clickhouse_buckets.cc).
  absl::Status InsertBuckets(const opmap::v1::Batch& batch, const analysis::SessionRollup& rollup,
                             int64_t bucket_ns);
  // The session's mapped events (clickhouse_events.cc); nothing when the commit has none.
  absl::Status InsertEvents(const opmap::v1::Batch& batch, const BatchCommit& commit);

  // "(agent, session) IN (complete sessions the range and filter select)"; `extra`: more
  // " AND ..." conditions on the sessions table.
  std::string SessionSelection(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
                               std::string_view extra = "") const;
  // The rollup rows of `subject` that the range and filter select, grouped server-side
  // by `keys` (column names), as RowBinary bodies whose rows are the keys then one
  // group's aggregates (ReadAggregate): per-session rows of the selected sessions, and
  // with `use_buckets` the bucket rows of the buckets wholly inside the range in place of
  // the sessions bucketed there (clickhouse_buckets.cc). A group may be in both bodies.
  absl::StatusOr<std::vector<std::string>> SelectRollupGroups(
      analysis::RollupSubject subject, const std::vector<std::string>& keys,
      const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter, bool use_buckets);
  // The complete sessions the range and filter select ("agent/session" → host, revision,
  // window), for queries over session_* tables, which carry neither.
  struct SessionInfo {
    std::string host, revision;
    int64_t window_start_ns = 0, window_end_ns = 0;
  };
  absl::StatusOr<absl::flat_hash_map<std::string, SessionInfo>> SelectSessionInfo(
      const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter);
  // Calls `visit(what, reason)` for the distinct Unavailable entries of the `selected`
  // sessions (SessionSelection), ordered, at most limit + 1; `what_prefix`: only those.
  absl::Status ScanUnavailable(std::string_view selected, size_t limit,
                               std::string_view what_prefix,
                               const std::function<void(std::string_view, std::string_view)>& visit);
  absl::StatusOr<query_common::SessionCount> CountSessions(const opmap::v1::TimeRange& range,
                                                           const opmap::v1::Filter& filter);

  // A pool of clients: HttpClient is thread-compatible, one per concurrent call.
  std::unique_ptr<clickhouse::HttpClient> Acquire();
  void Release(std::unique_ptr<clickhouse::HttpClient> client);

  const clickhouse::ClientOptions options_;
  const std::string database_;
  const std::string cluster_;
  const int64_t new_bucket_ns_;  // the width a database created here gets
  int64_t bucket_ns_ = 0;  // set by SetUpSchema, before any concurrent use; 0 = no buckets
  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<clickhouse::HttpClient>> pool_ ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_STORE_H_
