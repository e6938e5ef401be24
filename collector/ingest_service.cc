#include "collector/ingest_service.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/rollup.h"
#include "collector/rejected_batch.h"
#include "grpcpp/support/method_handler.h"

namespace opmap::collector {

using opmap::v1::Ack;
using opmap::v1::Batch;
using opmap::v1::Rejection;
using opmap::v1::RejectionCode;

struct IngestService::Session {
  std::mutex mu;
  bool loaded = false;      // last_seq / complete known
  // Known from the store, not assumed: a stream that begins at seq 1 assumes a new
  // session instead of reading it (one read per window saved; on ClickHouse, five
  // Distributed subqueries), and its first commit asks the store to check.
  bool verified = false;
  uint64_t last_seq = 0;    // highest seq stored
  bool complete = false;    // last_in_session stored with the rollup
  std::unique_ptr<analysis::SessionAssembler> assembler;  // null until needed
  TelemetryAccumulator telemetry;  // counters and drops of the batches the assembler took
  int64_t held = 0;                // records counted in held_records_ for the assembler
  int64_t held_bytes = 0;          // ... and bytes in held_bytes_
  uint64_t hold_order = 0;         // when it began to hold (larger: younger); 0: holds nothing
  // Hull of the capture windows of the batches the assembler took (0 = unset).
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  std::atomic<int64_t> last_used_ns{0};
};

namespace {

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

// Widens [start, end) by a batch's capture window; 0 means unset (a start of 0 is none).
void WidenWindow(const Batch& b, int64_t& start, int64_t& end) {
  if (b.window_start_ns() > 0 && (start == 0 || b.window_start_ns() < start)) {
    start = b.window_start_ns();
  }
  end = std::max(end, b.window_end_ns());
}

}  // namespace

IngestService::IngestService(Store* store, const Authenticator* auth, CollectorMetrics* metrics,
                             IngestOptions options)
    : store_(store),
      auth_(auth),
      metrics_(metrics),
      options_(options),
      streams_("Ingest streams", "--max-streams", options.max_streams, "--max-streams-per-token",
               options.max_streams_per_principal) {
  // Method 0 is Ingest; the same method and wire format, read as ReceivedBatch.
  MarkMethodStreamed(0, new grpc::internal::BidiStreamingHandler<IngestService, ReceivedBatch, Ack>(
                            [](IngestService* self, grpc::ServerContext* context,
                               grpc::ServerReaderWriter<Ack, ReceivedBatch>* stream) {
                              return self->IngestReceived(context, stream);
                            },
                            this));
}

IngestService::~IngestService() = default;

std::shared_ptr<IngestService::Session> IngestService::GetSession(const std::string& agent,
                                                                  const std::string& session) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Session>& entry = sessions_[Key(agent, session)];
  if (entry == nullptr) {
    entry = std::make_shared<Session>();
    metrics_->active_sessions.store(static_cast<int64_t>(sessions_.size()));
  }
  return entry;
}

absl::Status IngestService::TryHold(Session& s, int64_t records, int64_t bytes,
                                    const Batch& batch) {
  for (bool evicted = false;; evicted = true) {
    bool over_records = false;
    {
      std::lock_guard<std::mutex> lock(held_mu_);
      over_records = held_records_.load() + records > options_.max_held_records;
      if (!over_records && held_bytes_.load() + bytes <= options_.max_held_bytes) {
        if (s.hold_order == 0 && (records > 0 || bytes > 0)) s.hold_order = ++holds_begun_;
        s.held += records;
        s.held_bytes += bytes;
        held_records_.fetch_add(records);
        held_bytes_.fetch_add(bytes);
        return absl::OkStatus();
      }
    }
    // Sessions hold their records until their last batch. Were every holder refused while
    // the budget is spent, none could complete and free it: with 512 fleet windows in
    // flight, sessions of 100,000 kernels filled it half received and ingest stopped. So a
    // holder may take the room of younger holders no stream is using: their in-memory
    // state is dropped (every batch of theirs was acknowledged, so is durable; their next
    // batch rebuilds them from the store). The oldest holder can always finish, and the
    // budget is never passed. A session holding nothing yet evicts nobody. (s.hold_order
    // changes only under s.mu, which the caller holds.)
    if (evicted || s.hold_order == 0 || EvictYoungerHolders(s, records, bytes) == 0) {
      metrics_->budget_refusals.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the collector holds %d %s of incomplete sessions (limit %d, %s): batch %s/%s seq "
          "%d is refused for now; resend it later",
          over_records ? held_records_.load() : held_bytes_.load(),
          over_records ? "records" : "bytes",
          over_records ? options_.max_held_records : options_.max_held_bytes,
          over_records ? "--max-held-records" : "--max-held-bytes", batch.agent_id(),
          batch.session_id(), batch.seq()));
    }
  }
}

size_t IngestService::EvictYoungerHolders(const Session& s, int64_t records, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<decltype(sessions_)::iterator> younger;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    // use_count 1: no handler holds it (they take their reference under mu_), so nothing
    // changes its holds but this.
    const Session& other = *it->second;
    if (&other != &s && it->second.use_count() == 1 && other.hold_order > s.hold_order) {
      younger.push_back(it);
    }
  }
  std::sort(younger.begin(), younger.end(), [](auto a, auto b) {
    return a->second->hold_order > b->second->hold_order;
  });
  size_t evicted = 0;
  for (auto it : younger) {
    if (held_records_.load() + records <= options_.max_held_records &&
        held_bytes_.load() + bytes <= options_.max_held_bytes) {
      break;
    }
    Release(*it->second);
    sessions_.erase(it);
    ++evicted;
  }
  metrics_->sessions_evicted_for_room.fetch_add(static_cast<int64_t>(evicted),
                                                std::memory_order_relaxed);
  metrics_->active_sessions.store(static_cast<int64_t>(sessions_.size()));
  return evicted;
}

void IngestService::Unhold(Session& s, int64_t records, int64_t bytes) {
  std::lock_guard<std::mutex> lock(held_mu_);
  s.held -= records;
  s.held_bytes -= bytes;
  if (s.held == 0 && s.held_bytes == 0) s.hold_order = 0;
  held_records_.fetch_sub(records);
  held_bytes_.fetch_sub(bytes);
}

void IngestService::Release(Session& s) { Unhold(s, s.held, s.held_bytes); }

void IngestService::PeerLog(const std::string& line) const {
  if (options_.peer_log) {
    options_.peer_log(line);
  } else {
    Log(line);
  }
}

void IngestService::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "opmap-collector: %s\n", line.c_str());
  }
}

void IngestService::Reset(Session& s) {
  s.loaded = false;
  s.verified = false;
  s.last_seq = 0;
  s.complete = false;
  Release(s);
  s.assembler.reset();
  s.telemetry = TelemetryAccumulator();
}

absl::Status IngestService::EnsureLoaded(Session& s, const Batch& batch, bool may_assume_new) {
  if (s.loaded) return absl::OkStatus();
  // A stream that begins at seq 1 is most likely a new session. If it is not (a resend
  // after a failure), the store finds seq 1 stored or the session complete, answers
  // kDuplicate, and Commit reads the session then.
  SessionState state;
  const bool assume_new = may_assume_new && batch.seq() == 1;
  if (!assume_new) {
    absl::StatusOr<SessionState> stored = store_->GetSession(batch.agent_id(), batch.session_id());
    if (!stored.ok()) {
      return absl::UnavailableError(
          absl::StrFormat("store: reading session %s/%s: %s", batch.agent_id(),
                          batch.session_id(), stored.status().message()));
    }
    state = *stored;
  }
  s.last_seq = state.last_seq;
  s.complete = state.complete;
  Release(s);
  s.assembler.reset();
  s.telemetry = TelemetryAccumulator();
  s.loaded = true;
  s.verified = !assume_new;
  return absl::OkStatus();
}

absl::Status IngestService::EnsureAssembler(Session& s, const Batch& batch) {
  if (s.assembler != nullptr) return absl::OkStatus();
  auto assembler = std::make_unique<analysis::SessionAssembler>();
  s.telemetry = TelemetryAccumulator();
  s.window_start_ns = s.window_end_ns = 0;
  int64_t rebuilt_bytes = 0;
  if (s.last_seq > 0) {
    // Rebuild from what the store holds (after a restart or an eviction). Stored batches
    // passed validation when they came; replay them without today's size limits.
    absl::StatusOr<std::vector<std::string>> payloads =
        store_->LoadSessionPayloads(batch.agent_id(), batch.session_id());
    if (!payloads.ok()) {
      return absl::UnavailableError(
          absl::StrFormat("store: loading session %s/%s: %s", batch.agent_id(),
                          batch.session_id(), payloads.status().message()));
    }
    analysis::BatchLimits unlimited;
    unlimited.max_records = SIZE_MAX;
    unlimited.max_new_strings = SIZE_MAX;
    unlimited.max_string_bytes = SIZE_MAX;
    Batch stored;
    for (size_t i = 0; i < payloads->size(); ++i) {
      rebuilt_bytes += static_cast<int64_t>((*payloads)[i].size());
      if (!stored.ParseFromString((*payloads)[i])) {
        return absl::DataLossError(absl::StrFormat(
            "store: stored batch %d of session %s/%s does not parse", i + 1,
            batch.agent_id(), batch.session_id()));
      }
      if (absl::Status st = assembler->Append(stored, unlimited); !st.ok()) {
        return absl::DataLossError(absl::StrFormat(
            "store: stored batch seq %d of session %s/%s does not decode: %s", stored.seq(),
            batch.agent_id(), batch.session_id(), st.message()));
      }
      s.telemetry.Add(stored, *assembler);
      WidenWindow(stored, s.window_start_ns, s.window_end_ns);
    }
  }
  // Admitted like any batch: sessions rebuilt after an eviction or a restart must not pass
  // the budget either (refused, the agent resends; the rebuild is redone then).
  RETURN_IF_ERROR(TryHold(s, assembler->record_count(), rebuilt_bytes, batch));
  s.assembler = std::move(assembler);
  return absl::OkStatus();
}

absl::StatusOr<Ack> IngestService::HandleBatch(const Batch& batch, std::string* received,
                                               const Principal* principal) {
  Ack ack;
  ack.set_agent_id(batch.agent_id());
  ack.set_session_id(batch.session_id());
  auto reject = [&](uint64_t durable, RejectionCode code, std::string field,
                    std::string message) {
    ack.set_durable_seq(durable);
    Rejection* r = ack.add_rejected();
    r->set_seq(batch.seq());
    r->set_field(std::move(field));
    r->set_message(std::move(message));
    r->set_code(code);
    metrics_->AddRejected(code);
    return ack;
  };
  if (batch.agent_id().empty()) {
    return reject(0, opmap::v1::REJECTION_CODE_MISSING_IDENTITY, "agent_id", "empty");
  }
  if (batch.session_id().empty()) {
    return reject(0, opmap::v1::REJECTION_CODE_MISSING_IDENTITY, "session_id", "empty");
  }
  if (principal != nullptr) {
    if (absl::Status allowed = principal->MayWriteAgent(batch.agent_id()); !allowed.ok()) {
      metrics_->permission_denied.fetch_add(1, std::memory_order_relaxed);
      PeerLog(absl::StrFormat("ingest refused: %s (session %s, seq %d)", allowed.message(),
                              absl::CHexEscape(batch.session_id()), batch.seq()));
      return allowed;
    }
  }

  metrics_->recent_agents.Saw(batch.agent_id(), absl::Now());

  if (options_.health != nullptr) {
    RETURN_IF_ERROR(options_.health->Check(absl::StatusCode::kUnavailable,
                                           "ingest is stopped until it is repaired (agents "
                                           "keep their batches)"));
  }
  std::shared_ptr<Session> entry = GetSession(batch.agent_id(), batch.session_id());
  std::lock_guard<std::mutex> lock(entry->mu);
  Session& s = *entry;
  s.last_used_ns.store(NowNs());
  const bool was_loaded = s.loaded;
  RETURN_IF_ERROR(EnsureLoaded(s, batch, /*may_assume_new=*/true));
  const uint64_t seq = batch.seq();
  // A gap may mean another collector replica (same store) stored the batches between.
  // Ask the store for the session's last seq (one row) and rebuild only when it moved:
  // a peer alternating gaps must not make every message a rebuild of the session.
  if (was_loaded && seq > s.last_seq + 1) {
    absl::StatusOr<SessionState> stored = store_->GetSession(batch.agent_id(), batch.session_id());
    if (!stored.ok()) {
      return absl::UnavailableError(
          absl::StrFormat("store: reading session %s/%s: %s", batch.agent_id(),
                          batch.session_id(), stored.status().message()));
    }
    if (stored->last_seq != s.last_seq || stored->complete != s.complete) {
      Reset(s);
      RETURN_IF_ERROR(EnsureLoaded(s, batch, /*may_assume_new=*/false));
    }
  }
  if (seq == 0) {
    return reject(s.last_seq, opmap::v1::REJECTION_CODE_MISSING_IDENTITY, "seq",
                  "0 is not a sequence number (they start at 1)");
  }
  if (seq <= s.last_seq) {
    metrics_->duplicates.fetch_add(1, std::memory_order_relaxed);
    ack.set_durable_seq(s.last_seq);
    return ack;
  }
  if (s.complete) {
    return reject(s.last_seq, opmap::v1::REJECTION_CODE_INVALID_VALUE, "seq",
                  absl::StrFormat("%d follows the session's last batch (seq %d, "
                                  "last_in_session)",
                                  seq, s.last_seq));
  }
  if (seq != s.last_seq + 1) {
    // A lower seq is missing: hold back (cumulative acks) until the agent resends it.
    metrics_->out_of_order.fetch_add(1, std::memory_order_relaxed);
    ack.set_durable_seq(s.last_seq);
    return ack;
  }
  RETURN_IF_ERROR(EnsureAssembler(s, batch));

  const int64_t records = analysis::EventRecordCount(batch);
  const int64_t bytes =
      received != nullptr ? static_cast<int64_t>(received->size())
                          : static_cast<int64_t>(batch.ByteSizeLong());
  if (s.held_bytes + bytes > options_.max_session_bytes) {
    return reject(s.last_seq, opmap::v1::REJECTION_CODE_TOO_LARGE, "",
                  absl::StrFormat("the session would hold %d bytes, over the collector's limit "
                                  "of %d per session (--max-session-bytes)",
                                  s.held_bytes + bytes, options_.max_session_bytes));
  }
  // Admitted before it is decoded: what the batch takes is held from here on (Reset and
  // Release give it back), so concurrent batches cannot pass the limits together.
  RETURN_IF_ERROR(TryHold(s, records, bytes, batch));
  std::optional<Rejection> rejection = Append(s, batch, records);
  if (!rejection.has_value()) return Commit(s, batch, batch, received, std::nullopt, std::move(ack));
  rejection->set_seq(seq);
  std::optional<Batch> remainder = AppendRejectedRemainder(batch, *s.assembler, options_.limits);
  if (!remainder.has_value()) {
    // Nothing of it can be stored; the session stays where it was.
    Unhold(s, records, bytes);
    metrics_->AddRejected(rejection->code());
    *ack.add_rejected() = *std::move(rejection);
    ack.set_durable_seq(s.last_seq);
    return ack;
  }
  return Commit(s, batch, *remainder, nullptr, std::move(rejection), std::move(ack));
}

std::optional<Rejection> IngestService::Append(Session& s, const Batch& batch,
                                               int64_t records) {
  analysis::SessionAssembler& assembler = *s.assembler;
  Rejection rejection;
  if (assembler.record_count() + records > options_.max_session_records) {
    rejection.set_code(opmap::v1::REJECTION_CODE_TOO_LARGE);
    rejection.set_message(absl::StrFormat(
        "the session would hold %d records, over the collector's limit of %d per session",
        assembler.record_count() + records, options_.max_session_records));
    return rejection;
  }
  std::string field;
  absl::Status valid = assembler.Append(batch, options_.limits, &field);
  if (valid.ok()) return std::nullopt;
  rejection.set_field(field);
  rejection.set_message(RejectionCause(valid, field));
  rejection.set_code(analysis::RejectionCodeFor(valid));
  return rejection;
}

absl::StatusOr<Ack> IngestService::Commit(Session& s, const Batch& batch, const Batch& stored,
                                          std::string* received,
                                          std::optional<Rejection> rejection, Ack ack) {
  analysis::SessionAssembler& assembler = *s.assembler;
  const uint64_t seq = batch.seq();
  // Before the commit: a failed one resets the session, the accumulator with it.
  s.telemetry.Add(stored, assembler);

  BatchCommit commit;
  commit.batch = &stored;
  if (received != nullptr) {
    commit.payload = std::move(*received);
  } else {
    commit.payload = DeterministicBytes(stored);
  }
  commit.received_ns = NowNs();
  commit.string_count_after = assembler.string_count();
  commit.record_count = rejection.has_value() ? 0 : analysis::EventRecordCount(batch);
  // The session was read from the store and every commit since went through here.
  commit.follows_stored = s.verified;
  int64_t window_start = s.window_start_ns, window_end = s.window_end_ns;
  WidenWindow(stored, window_start, window_end);
  std::optional<analysis::SessionRollup> rollup;
  std::optional<SessionTelemetry> telemetry;
  std::optional<analysis::MappingResult> mapping;
  if (stored.last_in_session()) {
    mapping = analysis::MapGpuEvents(assembler.trace());
    rollup = analysis::BuildRollup(assembler.trace(), *mapping);
    metrics_->request_breakdown_cpu_ns.fetch_add(rollup->request_breakdown_cpu_ns,
                                                 std::memory_order_relaxed);
    commit.rollup = &*rollup;
    telemetry = s.telemetry.Finish(assembler.trace().strings);
    commit.telemetry = &*telemetry;
    commit.has_session_window = true;
    commit.session_window_start_ns = window_start;
    commit.session_window_end_ns = window_end;
    commit.trace = &assembler.trace();
    commit.mapping = &*mapping;
  }
  const absl::Time t0 = absl::Now();
  absl::StatusOr<CommitOutcome> outcome = options_.committer != nullptr
                                              ? options_.committer->Commit(commit)
                                              : store_->CommitBatch(commit);
  metrics_->ObserveCommit(absl::ToDoubleSeconds(absl::Now() - t0));
  if (!outcome.ok()) {
    metrics_->store_errors.fetch_add(1, std::memory_order_relaxed);
    if (outcome.status().code() == absl::StatusCode::kDataLoss && options_.health != nullptr) {
      options_.health->MarkDamaged(outcome.status());
      Log(absl::StrFormat("store damaged, ingest stopped: %s", outcome.status().message()));
    }
    Reset(s);  // the assembler holds the uncommitted batch: rebuild from the store
    return absl::UnavailableError(absl::StrFormat(
        "store: batch %s/%s seq %d not stored (resend it): %s", batch.agent_id(),
        batch.session_id(), seq, outcome.status().message()));
  }
  if (*outcome == CommitOutcome::kDuplicate) {
    // Another writer stored it first: our in-memory state is stale.
    metrics_->duplicates.fetch_add(1, std::memory_order_relaxed);
    Reset(s);
    RETURN_IF_ERROR(EnsureLoaded(s, batch, /*may_assume_new=*/false));
    ack.set_durable_seq(s.last_seq);
    return ack;
  }
  s.last_seq = seq;
  s.verified = true;  // the store checked what it did not know
  s.window_start_ns = window_start;
  s.window_end_ns = window_end;
  metrics_->batches.fetch_add(1, std::memory_order_relaxed);
  metrics_->records.fetch_add(commit.record_count, std::memory_order_relaxed);
  if (rejection.has_value()) {
    metrics_->AddRejected(rejection->code());
    *ack.add_rejected() = std::move(*rejection);
  }
  if (stored.last_in_session()) {
    s.complete = true;
    Release(s);
    s.assembler.reset();
    metrics_->sessions_complete.fetch_add(1, std::memory_order_relaxed);
  }
  ack.set_durable_seq(seq);
  return ack;
}

absl::StatusOr<CallAdmission::Ticket> IngestService::OpenStream(grpc::ServerContext* context,
                                                               const std::string& principal) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return absl::UnavailableError("collector is shutting down");
  absl::StatusOr<CallAdmission::Ticket> ticket = streams_.Admit(principal);
  if (!ticket.ok()) {
    metrics_->streams_refused.fetch_add(1, std::memory_order_relaxed);
    return ticket.status();
  }
  contexts_.insert(context);
  return ticket;
}

grpc::Status IngestService::IngestReceived(grpc::ServerContext* context,
                                           grpc::ServerReaderWriter<Ack, ReceivedBatch>* stream) {
  // Who the caller is, before the first message is read (nothing is buffered for a
  // caller that is refused).
  Principal principal;
  if (grpc::Status auth = auth_->Authorize(context, Permission::kIngest, &principal); !auth.ok()) {
    metrics_->auth_failures.fetch_add(1, std::memory_order_relaxed);
    return auth;
  }
  absl::StatusOr<CallAdmission::Ticket> opened = OpenStream(context, principal.name);
  if (!opened.ok()) {
    return grpc::Status(static_cast<grpc::StatusCode>(opened.status().code()),
                        std::string(opened.status().message()));
  }
  metrics_->ingest_streams.fetch_add(1, std::memory_order_relaxed);
  grpc::Status result = grpc::Status::OK;
  ReceivedBatch received;
  int64_t message = 0;
  for (;;) {
    {
      std::optional<CallWatchdog::Arm> idle;
      if (options_.watchdog != nullptr) {
        idle.emplace(options_.watchdog->Watch(context, options_.stream_idle_timeout));
      }
      if (!stream->Read(&received)) break;
    }
    ++message;
    if (!received.parsed) {
      metrics_->malformed_messages.fetch_add(1, std::memory_order_relaxed);
      result = grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrFormat("message %d of this stream (%d bytes) does not parse as "
                          "opmap.v1.Batch; nothing of it was stored",
                          message, received.bytes.size()));
      break;
    }
    absl::StatusOr<Ack> ack = HandleBatch(received.batch, &received.bytes, &principal);
    if (!ack.ok()) {
      const absl::StatusCode code = ack.status().code();
      // A refusal keeps its code; any other failure is the store's: the agent resends.
      const bool keep = code == absl::StatusCode::kPermissionDenied ||
                        code == absl::StatusCode::kResourceExhausted;
      result = grpc::Status(keep ? static_cast<grpc::StatusCode>(code)
                                 : grpc::StatusCode::UNAVAILABLE,
                            std::string(ack.status().message()));
      break;
    }
    std::optional<CallWatchdog::Arm> slow;
    if (options_.watchdog != nullptr) {
      slow.emplace(options_.watchdog->Watch(context, options_.write_timeout));
    }
    if (!stream->Write(*ack)) break;
  }
  metrics_->ingest_streams.fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  contexts_.erase(context);
  if (result.ok() && shutting_down_) {
    result = grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down");
  }
  return result;
}

void IngestService::BeginShutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  for (grpc::ServerContext* context : contexts_) context->TryCancel();
}

size_t IngestService::EvictIdle(absl::Time cutoff) {
  const int64_t cutoff_ns = absl::ToUnixNanos(cutoff);
  std::lock_guard<std::mutex> lock(mu_);
  size_t dropped = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    // use_count 1: no handler holds it (they take their reference under mu_).
    if (it->second.use_count() == 1 && it->second->last_used_ns.load() < cutoff_ns) {
      Release(*it->second);
      sessions_.erase(it++);
      ++dropped;
    } else {
      ++it;
    }
  }
  metrics_->active_sessions.store(static_cast<int64_t>(sessions_.size()));
  return dropped;
}

size_t IngestService::sessions_in_memory() {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace opmap::collector
