// The ClickHouse Store ("clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&cluster=NAME"), for
// collectors that scale out: any number of stateless collector replicas share one store,
// and a batch resent to any of them is stored once. Written for ClickHouse 18.16 over its
// HTTP interface (collector/clickhouse_client/http_client.h).
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
//   device_times, session_counters, session_drops, session_power, session_unavailable:
//           as in SQLite, keyed by (agent, session)
//   sessions(agent, session, last_seq, string_count, host, model, revision, labels,
//            window_start_ns, window_end_ns, gpu totals, bucketed, bucket_ns, flush,
//            flush_sessions)   one row per COMPLETE session (per copy, see "Exactly
//            once"): written last, it is the marker that the session's rows are stored
//   flush_buckets(subject, bucket_ns, model, revision, host, labels, layer_type,
//            operator, kernel, module, module_type; aggregate states; flush)   (v3)
//            pre-merged rollups: per bucket of kRollupBucketNs, key and flush, the rollup
//            rows of the flush's sessions bucketed there (collector/store/rollup_buckets.h),
//            merged by an AggregatingMergeTree. Queries read these instead of per-session
//            rows for the buckets wholly inside their range (clickhouse_buckets.cc).
//            rollup_buckets: the same without flush, written by schema v2 (flush 0), read
//            only in a database migrated from v2 that has rows there
//   events(day, agent, session, resource, kind, start/end/duration, name, operator,
//            layer_type, module, rule, device, stream, correlation, grid, block, request,
//            flush)   (v2) every GPU event, host range and launch call of a complete
//            session as mapped (analysis/summary/event_rows.h), for analysts' SQL
//            (docs/scale-out.md), written at completion. PARTITION BY day.
//   Every table a complete session writes carries `flush` (v3): see "Exactly once".
//   signoffs(report_sha256, kind, baseline, candidate, verdict, owner, role, signed_ns,
//            principal)
// With a cluster, each is a ReplicatedMergeTree table `<name>_local`
// ('/clickhouse/tables/{shard}/DB/<name>_local', '{replica}') behind a Distributed table
// `<name>` sharded by cityHash64(agent) (signoffs: by report hash), so one session lives on
// one shard. Without a cluster: plain MergeTree tables on one server.
//
// Exactly once. Batches are stored in groups (CommitBatches; CommitBatch is a group of
// one): per group, one INSERT per table holding the rows of every batch and every session
// the group completes, with insert_distributed_sync=1 (an INSERT returns once every shard
// stored its part). A group cannot rely on insert-block deduplication — a resend through
// another collector is grouped differently, so its blocks are other bytes — so every row a
// complete session adds (rollups, device_times, session_*, events, flush_buckets,
// sessions) carries the group's `flush`, a random 64-bit id (0: rows stored before schema
// v3, one session per INSERT). The sessions rows are inserted last; a session's copy
// counts only when its sessions row is stored, and of two copies (two collectors racing
// on one resend) the one with the least flush counts: every query selects rows by
// (agent, session, flush) IN ChosenCopies. So rows of a group that failed before its
// sessions rows, or of a copy that lost, are never read. Bucket rows (flush_buckets) merge
// the group's sessions per key; a flush's rows count only when all its sessions rows are
// stored (`flush_sessions` of them: a sessions INSERT may reach one shard and not the
// other) and none of its copies lost (clickhouse_buckets.cc); the sessions of any other
// flush are read per session. Which batches are stored is decided before the inserts, for
// the whole group in two reads (complete sessions, stored seqs), except for a batch the
// caller knows to follow its stored session (BatchCommit::follows_stored) that does not
// complete it. A group that fails part-way is acknowledged to none of its streams: the
// resends find its raw batches stored (a stored last batch of an incomplete session is
// finished: its session rows are written again, under a new flush) and the rest not.
// Raw batches two collectors stored concurrently are two rows; readers take one per seq.
// Not isolated: a query running while a racing copy is being stored may count it once
// more; the stored state answers exactly once the racing group returned.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/types/span.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collector/clickhouse_client/http_client.h"
#include "collector/store/query_common.h"
#include "collector/store/store.h"

namespace opmap::collector {
namespace clickhouse_internal {
struct SessionRows;
}  // namespace clickhouse_internal

class ClickHouseStore final : public Store {
 public:
  // v2: rollup_buckets, events, sessions.bucketed/bucket_ns. v3: flush columns and
  // flush_buckets (clickhouse_store.h "Exactly once"). Older databases are migrated.
  static constexpr int kSchemaVersion = 3;
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
  // Every commit is a group (CommitBatch is a group of one): one INSERT per table.
  bool GroupsCommits() const override { return true; }
  std::vector<absl::StatusOr<CommitOutcome>> CommitBatches(
      absl::Span<const BatchCommit* const> commits) override;
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
  ClickHouseStore(clickhouse_client::ClientOptions options, std::string database, std::string cluster,
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
  absl::Status ReadHasV2Buckets();
  // ALTER TABLE `table` (its local table with a cluster) `add`, unless it has `probe`.
  absl::Status AddColumns(std::string_view table, std::string_view probe, std::string_view add);
  // "DB.name": the table queries and inserts use (the Distributed one with a cluster).
  std::string Table(std::string_view name) const;
  // " ON CLUSTER name" or "".
  std::string OnCluster() const;
  // "GLOBAL IN" with a cluster (the set is built once and sent to the shards), else "IN".
  const char* In() const { return cluster_.empty() ? "IN" : "GLOBAL IN"; }
  const char* NotIn() const { return cluster_.empty() ? "NOT IN" : "GLOBAL NOT IN"; }

  absl::StatusOr<std::string> Query(std::string_view sql);
  // ALTER TABLE ... DROP PARTITION `day` of a day-partitioned table, on every replica.
  absl::Status DropDay(std::string_view table, uint32_t day);
  absl::Status Insert(std::string_view table, std::string_view columns, std::string_view rows);

  // Ingest (clickhouse_group_commit.cc, clickhouse_rollup_insert.cc).
  struct SessionWindow {
    int64_t start_ns = 0, end_ns = 0;
    std::optional<int64_t> bucket;  // the bucket start; none: not bucketed
  };
  // The session window of a commit completing its session: from the caller, or the hull
  // of its stored batches (not `seq`) and `pending` (this group's, not yet stored), widened
  // by the rollup's event hull.
  absl::StatusOr<SessionWindow> WindowOf(const BatchCommit& commit, int64_t pending_start_ns,
                                         int64_t pending_end_ns);
  // Appends a complete session's rows, each marked with `flush`, to `out`.
  void AppendSession(const opmap::v1::Batch& batch, const BatchCommit& commit,
                     const SessionWindow& window, uint64_t flush, uint32_t flush_sessions,
                     clickhouse_internal::SessionRows& out) const;
  void AppendEvents(const opmap::v1::Batch& batch, const BatchCommit& commit, uint64_t flush,
                    clickhouse_internal::SessionRows& out) const;
  // The session's rows for its bucket (clickhouse_buckets.cc), rows of `flush_buckets`.
  void AppendBuckets(const opmap::v1::Batch& batch, const analysis::SessionRollup& rollup,
                     int64_t bucket_ns, uint64_t flush, clickhouse_internal::SessionRows& out) const;
  // One INSERT per non-empty table, the sessions rows last.
  absl::Status InsertSessionRows(const clickhouse_internal::SessionRows& rows);

  // The copy of each complete session that counts — the least flush among its sessions
  // rows (clickhouse_store.h "Exactly once") — as a subquery of (agent, session, flush,
  // bucketed, bucket_ns) over the sessions rows `conditions` (" AND ...") select.
  std::string ChosenCopies(std::string_view conditions) const;
  // "(agent, session, flush) IN (the counting copies of the complete sessions the range and
  // filter select)"; `extra`: more " AND ..." conditions on ChosenCopies' columns.
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
  std::unique_ptr<clickhouse_client::HttpClient> Acquire();
  void Release(std::unique_ptr<clickhouse_client::HttpClient> client);

  const clickhouse_client::ClientOptions options_;
  const std::string database_;
  const std::string cluster_;
  const int64_t new_bucket_ns_;  // the width a database created here gets
  int64_t bucket_ns_ = 0;  // set by SetUpSchema, before any concurrent use; 0 = no buckets
  bool has_v2_buckets_ = false;  // rollup_buckets holds rows (set by SetUpSchema)
  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<clickhouse_client::HttpClient>> pool_ ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_STORE_H_
