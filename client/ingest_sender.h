// IngestSender: pushes Batches through `Ingest` (proto/opmap/v1/ingest.proto) the way an
// agent does — exactly once, end to end:
//   - one bidirectional stream; the caller's thread writes batches in order, a reader
//     thread takes the Acks (cumulative durable_seq per (agent, session));
//   - at most `window` batches unsettled at a time (bounded memory; the source is pulled
//     lazily, so it can generate batches on the fly);
//   - a batch is dropped from memory only once an Ack settles it (stored or rejected);
//   - when the stream breaks (collector killed, restarted, unreachable) it reconnects
//     with exponential backoff plus jitter, trying the collector addresses in order,
//     and resends every unsettled batch, oldest first; the collector drops what it
//     already holds and acks it again;
//   - UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT and UNIMPLEMENTED end the
//     run at once (resending cannot help); so does no progress for `retry_for`.
// Rejections (permanent, per batch) are reported through a callback and counted.
//
// Thread safety: one Run() at a time per sender; callbacks run on the caller's thread.
#ifndef OPMAP_CLIENT_INGEST_SENDER_H_
#define OPMAP_CLIENT_INGEST_SENDER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "client/collector_channel.h"
#include "opmap/v1/ingest.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::client {

struct SenderProgress {
  int64_t pulled = 0;    // batches taken from the source so far
  int64_t settled = 0;   // of those, acked (stored or rejected)
  int64_t rejected = 0;  // of those, rejected
  int64_t resent = 0;    // writes that repeated an earlier write
  int reconnects = 0;    // streams opened after the first
  bool source_done = false;
};

struct SenderOptions {
  size_t window = 64;  // unsettled batches at most
  // Give up when no batch was settled for this long while the collector was failing.
  absl::Duration retry_for = absl::Seconds(120);
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // Called after acks settle batches and after reconnects, at most every
  // `progress_interval`, and once at the end.
  std::function<void(const SenderProgress&)> progress;
  absl::Duration progress_interval = absl::Seconds(1);
  // Called once per rejected (agent, session, seq).
  std::function<void(const std::string& agent_id, const std::string& session_id,
                     const opmap::v1::Rejection&)>
      on_rejection;
  // Called once per batch as an Ack settles it (stored or rejected), in send order per
  // session: the moment a sender may forget it (the agent's spool deletes it).
  std::function<void(const std::string& agent_id, const std::string& session_id,
                     uint64_t seq)>
      on_settled;
  // Called when a stream broke and is about to be reopened (before the backoff sleep),
  // with batches possibly unsettled: the agent's outbox spills them to disk here.
  std::function<void()> on_stream_broken;
  // Called with a one-line note on each stream failure and reconnect.
  std::function<void(const std::string&)> log;
};

// A refusal because a batch is over the collector's message limit (--max-message-bytes):
// never retried, since the same batch would be refused again.
bool IsMessageTooLarge(const grpc::Status& status);

struct SenderResult {
  grpc::Status status;  // OK when every pulled batch is settled
  SenderProgress progress;
};

class IngestSender {
 public:
  IngestSender(CollectorChannel* client, SenderOptions options)
      : client_(client), options_(std::move(options)) {}

  // Pulls batches from `next` (false = no more) and returns once every batch is settled
  // or the run failed. Each session's batches must come in seq order 1, 2, ...
  SenderResult Run(const std::function<bool(opmap::v1::Batch*)>& next);

 private:
  CollectorChannel* client_;
  SenderOptions options_;
};

}  // namespace opmap::client

#endif  // OPMAP_CLIENT_INGEST_SENDER_H_
