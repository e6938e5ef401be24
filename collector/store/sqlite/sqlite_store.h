// The SQLite Store: one file on one collector host ("sqlite:PATH").
//
// Schema (version kSchemaVersion in PRAGMA user_version; created idempotently at open,
// versions 1 to 4 migrated, a newer version refused):
//   sessions(id, agent, session, last_seq, string_count, complete, host, model, revision,
//            labels_json, window_start_ns, window_end_ns, gpu_event_count, gpu_time_ns,
//            rule_graph_node .. rule_unmapped, bucket_ns, host_rollup, module_rollup)
//                                                              UNIQUE(agent, session)
//   batches(session_id, seq, received_ns, window_start_ns, window_end_ns, records,
//           payload BLOB)                                     PRIMARY KEY(session_id, seq)
//     One row per serialized Batch, not per event: a 10k-kernel batch is one insert.
//   rollups(session_id, subject, ordinal, layer_type, operator, kernel, count, sum_ns,
//           min_ns, max_ns, sketch_scale, sketch_offset, sketch_zero, sketch_sum,
//           sketch_min, sketch_max, sketch_bins BLOB, module (v4))
//     WITHOUT ROWID, clustered by (session_id, subject) so a query reads each selected
//     session's rows contiguously; the sketch in columns (sketch_columns.h).
//   device_times(session_id, device, gpu_uuid, gpu_name, span_ns, busy_ns, idle_ns,
//                compute_ns, non_compute_ns, event_count)
//   (v2) resources(id, host, model, revision, labels_json)      UNIQUE(all four)
//   (v2) rollup_buckets(resource_id, subject, bucket_ns, layer_type, operator, kernel,
//                       module (v4), count .. sketch_bins as in rollups)
//                                                       pre-merged per time bucket
//   (v2) meta(key, value): 'rollup_bucket_ns', the bucket width of this file
//   (v3) session_counters(session_id, name, source, pid, samples, value,
//                         time_enabled_ns, time_running_ns)   a complete session's sums
//   (v3) session_drops(session_id, stage, kind, reason, count)
//   (v3) session_unavailable(session_id, ordinal, what, reason)
//   (v3) sessions.host_rollup: 1 when the session's rollup has the request and
//        operator-CPU subjects and its counters; 0 for sessions a v2 collector rolled
//        up (their raw batches may be gone; queries name them as unavailable)
//   (v4) rollups.module, rollup_buckets.module (in the key): the module of the row's
//        events / ranges (rollup.h), "" outside any module; kModuleNotCollected
//        (rollup_buckets.h) for rows stored before v4. sessions.module_rollup: 1 when
//        the session was rolled up with modules; module groupings name the others as
//        unavailable
//   (v5) signoffs(id, report_sha256, kind, baseline, candidate, verdict, owner, role,
//                 signed_ns, principal)              UNIQUE(report_sha256, owner, role)
//        owners' approvals of reports (opmap signoff); never expired
// Resource columns (host, model, revision, labels) live on sessions; queries join.
// Rollup queries read bucket rows where they can and per-session rows elsewhere, with
// the same answers (rollup_buckets.h has the exact split).
//
// Durability: WAL with synchronous=NORMAL. A CommitBatch that returned is in the WAL,
// in the OS: it survives a kill of the collector process (tested). After a power loss or
// OS crash, commits since the WAL was last synced (at the latest, the last checkpoint)
// may be lost although they were acked; set `synchronous_full` where acked batches must
// survive that too, at some ingest cost. Checkpoints run on a thread of their own
// (wal_checkpointer.h), not inside a commit.
//
// Time ranges select sessions whose window [window_start_ns, window_end_ns) overlaps
// the request's [start_ns, end_ns) (0/0 = everything). A session's window is the hull of
// its batches' capture windows and, once rolled up, of its GPU events; a session whose
// window is still open (end 0) overlaps every range that ends after its start.
//
// Connections and threads: the writer (ingest: CommitBatch, GetSession,
// LoadSessionPayloads, retention) under `mu_`; a reader for the queries and export under
// `read_mu_` (WAL readers see every commit that returned and never block the writer, so
// a query does not stall ingest); the checkpointer's. A ":memory:" store has one
// connection for everything.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_STORE_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collector/store/sqlite/sqlite_buckets.h"
#include "collector/store/sqlite/sqlite_commit_mark.h"
#include "collector/store/query_common.h"
#include "collector/store/sqlite/sqlite_db.h"
#include "collector/store/store.h"
#include "collector/store/sqlite/wal_checkpointer.h"

namespace opmap::collector {

struct SqliteStoreOptions {
  // How long a call waits for another connection's write lock (another process on the
  // same file) before failing with kUnavailable.
  int busy_timeout_ms = 5000;
  // synchronous=FULL: every commit is synced to disk (survives power loss).
  bool synchronous_full = false;
  // Width of the rollup buckets of a file created (or migrated from v1) by this open;
  // an existing v2 file keeps its own. 0: no buckets. 1 h: a `--since 24h` query reads
  // 23 bucket rows per key and per-session rows for at most the 2 partial hours.
  int64_t rollup_bucket_ns = int64_t{3600} * 1'000'000'000;
  // WAL size (bytes) at which the checkpointer thread copies it back; past 16 times
  // that, a commit checkpoints synchronously.
  int64_t checkpoint_bytes = int64_t{16} << 20;
};

class SqliteStore final : public Store {
 public:
  static constexpr int kSchemaVersion = 5;
  static constexpr uint32_t kDefaultLatencyLimit = query_common::kDefaultLatencyLimit;
  static constexpr uint32_t kDefaultTopKernels = query_common::kDefaultTopKernels;
  static constexpr uint32_t kDefaultCounterRows = query_common::kDefaultCounterRows;

  // Opens or creates the file at `path`. Errors name the path: kFailedPrecondition when
  // it can't be opened (e.g. a directory), kDataLoss when it is not an SQLite database.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           const SqliteStoreOptions& options = {});

  absl::StatusOr<SessionState> GetSession(std::string_view agent_id,
                                          std::string_view session_id) override;
  absl::StatusOr<CommitOutcome> CommitBatch(const BatchCommit& commit) override;
  // One transaction for the group (a savepoint per batch, so one batch's failure rolls
  // back that batch alone); every outcome is known once the COMMIT returned.
  std::vector<absl::StatusOr<CommitOutcome>> CommitBatches(
      absl::Span<const BatchCommit* const> commits) override;
  bool GroupsCommits() const override { return true; }
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
  std::vector<std::string> OpenNotes() const override { return open_notes_; }
  absl::Status CheckIntegrity() override;

  ~SqliteStore() override;
  int64_t rollup_bucket_ns() const { return bucket_ns_; }
  // Empties a ":memory:" store (every row of every table; the commit count back to 0)
  // and keeps its schema and prepared statements, so a fuzzer reuses one store across
  // inputs instead of paying schema setup and statement preparation per input. A file
  // store answers FailedPrecondition: nothing deletes a real store's data this way.
  absl::Status RemoveAllRowsForTesting();
  // The background checkpointer (null for ":memory:"): tests flush it.
  WalCheckpointer* checkpointer() { return checkpointer_.get(); }

 private:
  SqliteStore(std::unique_ptr<sqlite::Database> db, int64_t bucket_ns)
      : bucket_ns_(bucket_ns), db_(std::move(db)) {}

  // One batch's rows, inside the caller's transaction and savepoint.
  absl::StatusOr<CommitOutcome> CommitOneLocked(const BatchCommit& commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status InsertRollup(int64_t session_rowid, const std::string& labels_json,
                            const opmap::v1::Resource& resource,
                            const analysis::SessionRollup& rollup)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Complete sessions the range and filter select, and how many of them a v2 collector
  // rolled up (host_rollup = 0) or a v2/v3 one (module_rollup = 0).
  using SessionCount = query_common::SessionCount;
  absl::StatusOr<SessionCount> CountSessions(const opmap::v1::TimeRange& range,
                                             const opmap::v1::Filter& filter);
  absl::Status InsertTelemetry(int64_t session_rowid, const SessionTelemetry& telemetry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Runs `fn` with the query connection and its lock held (the writer's for ":memory:").
  template <typename Fn>
  absl::Status WithReader(Fn&& fn) {
    if (reader_ == nullptr) {
      absl::MutexLock lock(&mu_);
      return fn(*db_);
    }
    absl::MutexLock lock(&read_mu_);
    return fn(*reader_);
  }

  const int64_t bucket_ns_;  // this file's bucket width; 0 = none
  absl::Mutex mu_;
  std::unique_ptr<sqlite::Database> db_ ABSL_GUARDED_BY(mu_);
  absl::Mutex read_mu_;
  // Set at open, then only used under read_mu_ (the pointer itself never changes).
  std::unique_ptr<sqlite::Database> reader_;
  std::unique_ptr<WalCheckpointer> checkpointer_;
  // Batch commits in the database and acknowledged beside it (sqlite_commit_mark.h);
  // null mark for ":memory:".
  int64_t commits_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<CommitMark> mark_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> open_notes_;  // set by Open only
  // A group commit's rollup bucket rows: the batch's own until its savepoint is
  // released, then the group's, merged into rollup_buckets before the COMMIT.
  BucketMerger batch_buckets_ ABSL_GUARDED_BY(mu_);
  BucketMerger group_buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_STORE_H_
