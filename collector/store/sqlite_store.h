// The SQLite Store: one file on one collector host ("sqlite:PATH").
//
// Schema (version kSchemaVersion in PRAGMA user_version; created idempotently at open,
// a newer version is refused):
//   sessions(id, agent, session, last_seq, string_count, complete, host, model, revision,
//            labels_json, window_start_ns, window_end_ns, gpu_event_count, gpu_time_ns,
//            rule_graph_node .. rule_unmapped)               UNIQUE(agent, session)
//   batches(session_id, seq, received_ns, window_start_ns, window_end_ns, records,
//           payload BLOB)                                     PRIMARY KEY(session_id, seq)
//     One row per serialized Batch, not per event: a 10k-kernel batch is one insert.
//   rollups(session_id, subject, ordinal, layer_type, operator, kernel, count, sum_ns,
//           min_ns, max_ns, sketch_scale, sketch_offset, sketch_zero, sketch_sum,
//           sketch_min, sketch_max, sketch_bins BLOB)
//     WITHOUT ROWID, clustered by (session_id, subject) so a query reads each selected
//     session's rows contiguously; the sketch in columns (sketch_columns.h).
//   device_times(session_id, device, gpu_uuid, gpu_name, span_ns, busy_ns, idle_ns,
//                compute_ns, non_compute_ns, event_count)
// Resource columns (host, model, revision, labels) live on sessions; queries join.
//
// Durability: WAL with synchronous=NORMAL. A CommitBatch that returned is in the WAL,
// in the OS: it survives a kill of the collector process (tested). After a power loss or
// OS crash, commits since the WAL was last synced (at the latest, the last checkpoint)
// may be lost although they were acked; set `synchronous_full` where acked batches must
// survive that too, at some ingest cost.
//
// Time ranges select sessions whose window [window_start_ns, window_end_ns) overlaps
// the request's [start_ns, end_ns) (0/0 = everything). A session's window is the hull of
// its batches' capture windows and, once rolled up, of its GPU events; a session whose
// window is still open (end 0) overlaps every range that ends after its start.
//
// Thread safety: one connection, every call holds the store's mutex (queries over
// rollups take milliseconds). ForEachBatch releases it while `visit` runs.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_STORE_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collector/store/sqlite_db.h"
#include "collector/store/store.h"

namespace opmap::collector {

struct SqliteStoreOptions {
  // How long a call waits for another connection's write lock (another process on the
  // same file) before failing with kUnavailable.
  int busy_timeout_ms = 5000;
  // synchronous=FULL: every commit is synced to disk (survives power loss).
  bool synchronous_full = false;
};

class SqliteStore final : public Store {
 public:
  static constexpr int kSchemaVersion = 1;
  static constexpr uint32_t kDefaultLatencyLimit = 1000;
  static constexpr uint32_t kDefaultTopKernels = 20;

  // Opens or creates the file at `path`. Errors name the path: kFailedPrecondition when
  // it can't be opened (e.g. a directory), kDataLoss when it is not an SQLite database.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           const SqliteStoreOptions& options = {});

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
  absl::Status ForEachBatch(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
                            const std::function<absl::Status(std::string_view)>& visit) override;
  absl::StatusOr<int64_t> ExpireRawBefore(int64_t cutoff_ns) override;
  StoreStats Stats() override;

 private:
  explicit SqliteStore(std::unique_ptr<sqlite::Database> db) : db_(std::move(db)) {}

  absl::Status InsertRollup(int64_t session_rowid, const opmap::v1::Resource& resource,
                            const analysis::SessionRollup& rollup)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<sqlite::Database> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_STORE_H_
