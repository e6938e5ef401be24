// The Ingest service: `rpc Ingest(stream Batch) returns (stream Ack)`, exactly once.
//
// Per batch of (agent, session), under that session's lock:
//  - missing identity (empty agent_id / session_id, seq 0): rejected MISSING_IDENTITY,
//    nothing stored, durable_seq = what the session already has (0 when unknown);
//  - seq <= the session's stored last_seq: a duplicate, dropped; Ack(durable_seq =
//    last_seq);
//  - seq > last_seq + 1: a gap (a lower seq is missing): not stored, not rejected;
//    Ack(durable_seq = last_seq) — the agent resends from the gap;
//  - seq after a complete session's last batch: rejected INVALID_VALUE ("seq"), not
//    stored;
//  - otherwise validated and appended to the session's SessionAssembler. Valid: stored
//    with its records. Invalid: stored *without its events* (its string-table delta
//    alone, when that is valid, so later ids keep their meaning — ingest.proto), and
//    the Ack lists a Rejection{seq, field, message, code}. Either way, on the session's
//    last batch the assembled Trace is mapped and rolled up and the rollup — with the
//    session's summed counters and drops (session_telemetry.h) — is committed in the
//    same transaction; then Ack(durable_seq = seq). A rejected batch's counters and
//    drops go with its events.
//  - A failed commit ends the stream with UNAVAILABLE (the agent resends) and drops the
//    session's in-memory state, which is rebuilt from the store on its next batch.
// Sessions are rebuilt from Store::LoadSessionPayloads when a batch arrives for a
// session the store has and memory doesn't (after a restart or an idle eviction), and
// when a batch leaves a gap after what memory holds: collector replicas sharing one store
// (ClickHouse) each see only some of a session's batches, so a gap is re-read from the
// store once before the batch is held back.
// Fuzzed by tests/fuzz/batch_ingest_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_COLLECTOR_INGEST_SERVICE_H_
#define OPMAP_COLLECTOR_INGEST_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "analysis/wire/batch_codec.h"
#include "collector/auth.h"
#include "collector/call_admission.h"
#include "collector/call_watchdog.h"
#include "collector/group_commit.h"
#include "collector/metrics.h"
#include "collector/received_batch.h"
#include "collector/session_telemetry.h"
#include "collector/store_health.h"
#include "collector/store/store.h"
#include "opmap/v1/ingest.grpc.pb.h"

namespace opmap::collector {

struct IngestOptions {
  analysis::BatchLimits limits;
  // Records one session may accumulate (it is held in memory until its rollup); a batch
  // that would pass it is rejected TOO_LARGE.
  int64_t max_session_records = 3'000'000;
  // Records all incomplete sessions together may hold in memory (~130 B each); a batch
  // that would pass it ends its stream RESOURCE_EXHAUSTED and the agent resends later.
  int64_t max_held_records = 3'000'000;
  // Bytes (the batches as they came, strings included) one session and all incomplete
  // sessions together may hold: records alone let a peer hold gigabytes in few records
  // of long strings. Over the session's: TOO_LARGE; over all: RESOURCE_EXHAUSTED.
  int64_t max_session_bytes = 256 << 20;
  int64_t max_held_bytes = 256 << 20;
  // Open Ingest streams, in all and per principal (token); more are refused
  // RESOURCE_EXHAUSTED.
  int max_streams = 256;
  int max_streams_per_principal = 64;
  // A stream with no batch for stream_idle_timeout, or whose agent does not take an ack
  // within write_timeout, is cancelled (call_watchdog.h; null watchdog: never). Agents
  // open a stream per burst of windows and close it when all is acked.
  CallWatchdog* watchdog = nullptr;
  // Commits go through it when set (group commit: group_commit.h), else straight to
  // the store.
  GroupCommitter* committer = nullptr;
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  absl::Duration write_timeout = absl::Seconds(30);
  // Shared with the queries and the integrity checks; null: never damaged.
  StoreHealth* health = nullptr;
  // Where refusals worth an operator's attention are logged (stderr when unset).
  std::function<void(const std::string&)> log;
  // Where the lines a peer can cause once per batch go (a refused batch): a rate-limited
  // sink, so a flood cannot cut the collector's own lines. Unset: `log`.
  std::function<void(const std::string&)> peer_log;
};

class IngestService final : public opmap::v1::Ingest::Service {
 public:
  IngestService(Store* store, const Authenticator* auth, CollectorMetrics* metrics,
                IngestOptions options = {});
  ~IngestService() override;

  // The stream. The constructor registers it in place of the generated handler, reading
  // ReceivedBatch (parsed + the bytes as received, which are what the store keeps).
  grpc::Status IngestReceived(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<opmap::v1::Ack, ReceivedBatch>* stream);

  // One batch, as the stream handler processes it. An error is transient (the store
  // failed: UNAVAILABLE; the memory budget is spent: RESOURCE_EXHAUSTED) or a refusal
  // (PERMISSION_DENIED: `principal` may not write the batch's agent id): the stream ends
  // with it and nothing of the batch is acknowledged.
  // `received`: the batch's serialized bytes as they came, stored as they are when the
  // batch is valid (moved from); null: serialized here. `principal` null: no identity
  // check (in-process callers).
  absl::StatusOr<opmap::v1::Ack> HandleBatch(const opmap::v1::Batch& batch,
                                             std::string* received = nullptr,
                                             const Principal* principal = nullptr);

  // Cancels every open stream and refuses new ones with UNAVAILABLE. Commits in
  // progress finish (their acks may not reach the agent, which resends: duplicates).
  void BeginShutdown();

  // Forgets in-memory state of sessions not used since `cutoff` (rebuilt on demand).
  // Returns how many were dropped.
  size_t EvictIdle(absl::Time cutoff);

  size_t sessions_in_memory();

 private:
  struct Session;
  using Key = std::pair<std::string, std::string>;

  std::shared_ptr<Session> GetSession(const std::string& agent, const std::string& session);
  // Reads the session's state from the store, unless known; `may_assume_new`: a batch of
  // seq 1 assumes a new session without reading (Session::verified).
  absl::Status EnsureLoaded(Session& s, const opmap::v1::Batch& batch, bool may_assume_new);
  absl::Status EnsureAssembler(Session& s, const opmap::v1::Batch& batch);
  // Appends the next batch of a session to its assembler; a Rejection when it is too
  // large or invalid (nothing of it appended then).
  std::optional<opmap::v1::Rejection> Append(Session& s, const opmap::v1::Batch& batch,
                                             int64_t records);
  // Stores `stored` (the batch as it came, or what is kept of it when `rejection` is
  // set), with the session's rollup when it is the last, and completes `ack`.
  // `received`: the bytes of `stored` as they came (moved from); null: serialized here.
  absl::StatusOr<opmap::v1::Ack> Commit(Session& s, const opmap::v1::Batch& batch,
                                        const opmap::v1::Batch& stored, std::string* received,
                                        std::optional<opmap::v1::Rejection> rejection,
                                        opmap::v1::Ack ack);
  void Reset(Session& s);
  // Admits a batch's records and bytes into `s` and the collector's totals at once, or
  // refuses (RESOURCE_EXHAUSTED naming the limit): concurrent batches cannot pass a limit
  // together. Release gives back all `s` holds; Unhold part of it.
  absl::Status TryHold(Session& s, int64_t records, int64_t bytes, const opmap::v1::Batch& batch);
  // Drops the in-memory state of sessions that began holding after `s` and that no
  // handler is using, youngest first, until `records` and `bytes` fit; how many.
  size_t EvictYoungerHolders(const Session& s, int64_t records, int64_t bytes);
  void Unhold(Session& s, int64_t records, int64_t bytes);
  void Release(Session& s);
  // A slot under --max-streams and the token's share, and `context` registered for
  // BeginShutdown; the caller erases it from contexts_ (under mu_) when the stream ends.
  absl::StatusOr<CallAdmission::Ticket> OpenStream(grpc::ServerContext* context,
                                                   const std::string& principal);
  void Log(const std::string& line) const;
  void PeerLog(const std::string& line) const;

  Store* store_;
  const Authenticator* auth_;
  CollectorMetrics* metrics_;
  IngestOptions options_;

  std::mutex held_mu_;  // admission: held_records_ and held_bytes_ checked and added at once
  std::atomic<int64_t> held_records_{0};  // records in every session's assembler
  std::atomic<int64_t> held_bytes_{0};    // their batches' bytes
  uint64_t holds_begun_ = 0;  // under held_mu_: the last Session::hold_order given

  std::mutex mu_;  // guards sessions_, contexts_, shutting_down_
  absl::flat_hash_map<Key, std::shared_ptr<Session>> sessions_;
  absl::flat_hash_set<grpc::ServerContext*> contexts_;
  CallAdmission streams_;  // open streams, in all and per token
  bool shutting_down_ = false;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_INGEST_SERVICE_H_
