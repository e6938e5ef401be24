// Store: where the collector keeps raw batches (bounded retention) and session rollups
// (kept longer), and answers queries. The only place that knows which engine it talks to
// (SQLite: sqlite_store.h; ClickHouse: clickhouse_store.h; OpenStore in store.cc picks
// one from the URL): everything else holds a Store&.
//
// Exactly once: CommitBatch stores a batch and advances its session atomically (SQLite:
// one transaction; ClickHouse: deterministic inserts that block deduplication makes
// idempotent, the session marked complete last), and refuses an (agent, session, seq) it
// already has; the collector acks a seq only after CommitBatch returned OK (or kDuplicate).
//
// Thread safety: implementations are safe for concurrent use from gRPC threads.
// Fuzzed by tests/fuzz/config_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_COLLECTOR_STORE_STORE_H_
#define OPMAP_COLLECTOR_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/summary/rollup.h"
#include "opmap/v1/query.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::collector {

// What the store knows of one (agent, session).
struct SessionState {
  uint64_t last_seq = 0;         // highest seq stored; 0 = none
  uint32_t string_count = 0;     // strings the session's table holds after last_seq
  bool complete = false;         // the last_in_session batch is stored and rolled up
};

// What a session's batches said besides events, summed over the session at its end
// (collector/session_telemetry.h): counters per (name, source, pid), drops per (stage,
// kind, reason), and the distinct capabilities reported unavailable.
struct CounterTotal {
  std::string name;
  int source = 0;  // opmap::v1::CounterSource
  uint32_t pid = 0;
  int64_t samples = 0;
  int64_t value = 0;
  int64_t time_enabled_ns = 0;
  int64_t time_running_ns = 0;
};
struct DropTotal {
  int stage = 0;  // opmap::v1::DropStage
  int kind = 0;   // opmap::v1::EventKind
  std::string reason;
  int64_t count = 0;
};
struct SessionTelemetry {
  std::vector<CounterTotal> counters;
  // One row per (domain, device): the session's Batch.power rows merged (normally one per
  // device, on the last batch). Per-figure reasons are in `unavailable` as
  // ("power <device> <figure>", reason).
  std::vector<opmap::v1::PowerSample> power;
  std::vector<DropTotal> drops;
  std::vector<std::pair<std::string, std::string>> unavailable;  // (what, reason)
};

// One batch to commit. `payload` is the batch serialized (stored as is, for export and
// for rebuilding a session after a restart).
struct BatchCommit {
  const opmap::v1::Batch* batch = nullptr;
  std::string payload;
  int64_t received_ns = 0;
  uint32_t string_count_after = 0;  // session string table size including this batch
  int64_t record_count = 0;         // kernels + memory ops + launches + ranges in it
  // Set on the session's last batch: stored in the same transaction, marking it complete.
  const analysis::SessionRollup* rollup = nullptr;
  // With `rollup`: the session's counters and drops, stored in the same transaction.
  const SessionTelemetry* telemetry = nullptr;
  // Set by a caller that read the session's state from this store and holds it since
  // (the ingest service): `batch` is the seq right after the stored last_seq. A store
  // may then skip reading whether the seq is stored (ClickHouse: block deduplication
  // drops a concurrent resend of the same bytes; an older resend is what the caller's
  // last_seq catches). A session's last batch is checked whatever this says (once per
  // session: it may be the resend of a commit that failed after storing the batch).
  bool follows_stored = false;
  // With `rollup`, when the caller tracked it: the hull of the capture windows of every
  // batch of the session (this one included), 0 = unset. Lets a store that can't read
  // its own writes consistently (ClickHouse after a replica failover) write the same
  // session row whichever collector completes the session.
  bool has_session_window = false;
  int64_t session_window_start_ns = 0;
  int64_t session_window_end_ns = 0;
  // With `rollup`, optional: the session's decoded events and their mapping, for a
  // store that keeps mapped events as rows (ClickHouse's `events` table).
  const analysis::Trace* trace = nullptr;
  const analysis::MappingResult* mapping = nullptr;
};

enum class CommitOutcome { kStored, kDuplicate };

struct StoreStats {
  int64_t batches = 0;
  int64_t records = 0;
  int64_t sessions_complete = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual absl::StatusOr<SessionState> GetSession(std::string_view agent_id,
                                                  std::string_view session_id) = 0;

  // Durable when it returns (WAL + synchronous=NORMAL survives a process kill).
  virtual absl::StatusOr<CommitOutcome> CommitBatch(const BatchCommit& commit) = 0;

  // A group of batches (of different sessions, or successive seqs of one), one outcome
  // each, all durable when it returns; each batch is stored or not on its own, as if
  // committed alone in order. The group commit (collector/group_commit.h) calls this.
  // Engines that cannot share a transaction commit them one by one (the default).
  // Whether CommitBatches shares one transaction (so grouping pays); false: the
  // collector commits each batch on its own thread, concurrently.
  virtual bool GroupsCommits() const { return false; }
  virtual std::vector<absl::StatusOr<CommitOutcome>> CommitBatches(
      absl::Span<const BatchCommit* const> commits) {
    std::vector<absl::StatusOr<CommitOutcome>> outcomes;
    outcomes.reserve(commits.size());
    for (const BatchCommit* c : commits) outcomes.push_back(CommitBatch(*c));
    return outcomes;
  }

  // Serialized batches of one session in seq order (to rebuild it after a restart).
  virtual absl::StatusOr<std::vector<std::string>> LoadSessionPayloads(
      std::string_view agent_id, std::string_view session_id) = 0;

  // Queries over rollups (latency, breakdown, top kernels) and raw batches (export).
  virtual absl::StatusOr<opmap::v1::LatencyResponse> QueryLatency(
      const opmap::v1::LatencyRequest& request) = 0;
  virtual absl::StatusOr<opmap::v1::TimeBreakdownResponse> QueryTimeBreakdown(
      const opmap::v1::TimeBreakdownRequest& request) = 0;
  virtual absl::StatusOr<opmap::v1::TopKernelsResponse> QueryTopKernels(
      const opmap::v1::TopKernelsRequest& request) = 0;
  virtual absl::StatusOr<opmap::v1::CountersResponse> QueryCounters(
      const opmap::v1::CountersRequest& request) = 0;
  virtual absl::StatusOr<opmap::v1::PowerResponse> QueryPower(
      const opmap::v1::PowerRequest& request) = 0;
  // Calls `visit` with each stored serialized batch whose window overlaps the range and
  // matches the filter, grouped by session and in seq order within one.
  virtual absl::Status ForEachBatch(const opmap::v1::TimeRange& range,
                                    const opmap::v1::Filter& filter,
                                    const std::function<absl::Status(std::string_view)>& visit) = 0;

  // Report sign-offs (never expired). A repeat of (sha256, owner, role) stores nothing
  // and returns the first record with `already` set.
  struct SignoffOutcome {
    opmap::v1::Signoff stored;
    bool already = false;
  };
  virtual absl::StatusOr<SignoffOutcome> RecordSignoff(const opmap::v1::Signoff& signoff) = 0;
  virtual absl::StatusOr<std::vector<opmap::v1::Signoff>> ListSignoffs(
      const opmap::v1::ListSignoffsRequest& request) = 0;

  // Deletes raw batches of complete sessions received before `cutoff_ns` (rollups stay).
  virtual absl::StatusOr<int64_t> ExpireRawBefore(int64_t cutoff_ns) = 0;

  virtual StoreStats Stats() = 0;

  // Checks the stored files for damage (SQLite: PRAGMA quick_check, on the query
  // connection, so ingest goes on meanwhile). DataLoss naming what is damaged; OK where
  // the engine checks itself (ClickHouse verifies its parts' checksums on read).
  virtual absl::Status CheckIntegrity() { return absl::OkStatus(); }

  // What opening the store found and repaired on its own, one line each, for the log
  // (SQLite: a damaged write-ahead log recovered, and where the log as found was kept).
  virtual std::vector<std::string> OpenNotes() const { return {}; }
};

// "sqlite:PATH" (PATH created if missing) or
// "clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&password=P&cluster=NAME" (clickhouse_store.h).
absl::StatusOr<std::unique_ptr<Store>> OpenStore(std::string_view url);
// The URL's syntax only (no connection, no file): what config validation checks, so the
// engines' URL forms stay known here alone.
absl::Status CheckStoreUrl(std::string_view url);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_STORE_H_
