// The plain types of the agent's outbox (agent/spool/outbox.h): the key a batch is acked
// by, the options, the counters, and what the sender takes out.
#ifndef OPMAP_AGENT_SPOOL_OUTBOX_TYPES_H_
#define OPMAP_AGENT_SPOOL_OUTBOX_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace opmap::agent {

// What the collector acks: (capture session, sequence number). Within one session, seqs
// are pushed strictly increasing; an Ack is cumulative per session.
struct OutboxKey {
  std::string session_id;  // non-empty, at most kMaxSessionIdBytes
  uint64_t seq = 0;        // > 0 (0 means "nothing" in an Ack)
};

struct OutboxOptions {
  // Batch bytes held in memory. Past this the oldest in memory go to the spool (or, with
  // no spool, are dropped). A batch larger than this goes straight to the spool.
  size_t memory_bytes = size_t{64} << 20;
  // Segment-file bytes on disk, acked records still inside live segments included; the
  // spool never holds more. When full, the oldest segment is dropped (every batch in it
  // counted).
  uint64_t spool_bytes = uint64_t{1} << 30;
  // Empty: memory only (nothing survives a restart).
  std::string spool_dir;
  // A segment is closed once the next record would take it past this size; it is the
  // unit of deletion (all its records acked or dropped) and of dropping.
  size_t segment_bytes = size_t{16} << 20;
  // fdatasync a segment after each Push/Spill that wrote to it, and sync the directory
  // after creating files. Only power loss needs this; SIGKILL does not.
  bool fsync = true;
  // Acks of spooled batches are written to the spool's state file at most this often
  // (and at Close). An ack lost to a crash only means a duplicate resend, which the
  // collector drops; zero writes on every Ack that touches the spool.
  absl::Duration state_write_interval = absl::Seconds(1);
};

// Why the outbox dropped a batch.
enum class DropCause {
  kQueueFull = 0,    // no spool dir and the memory queue was full
  kTooLarge = 1,     // larger than the memory queue (no spool) or the spool
  kSpoolFull = 2,    // the spool's oldest segment made room for newer batches
  kWriteError = 3,   // writing it to the spool failed (ENOSPC, EIO)
  kSessionLost = 4,  // an earlier batch of its session was dropped: it can never be stored
};
inline constexpr int kDropCauseCount = 5;
// "queue full", "too large", "spool full", "spool write error", "session lost".
const char* DropCauseName(DropCause cause);

struct OutboxStats {
  // Now: unacked batches and their payload bytes, by tier. The index costs another
  // ~100 bytes per unacked batch in memory on top of memory_bytes.
  uint64_t memory_batches = 0;
  uint64_t memory_bytes = 0;
  uint64_t spool_batches = 0;
  uint64_t spool_batch_bytes = 0;
  uint64_t spool_bytes = 0;  // segment files on disk (what spool_bytes caps)
  uint64_t spool_segments = 0;
  // Since Open.
  uint64_t pushed_batches = 0;
  uint64_t pushed_bytes = 0;
  uint64_t acked_batches = 0;
  uint64_t acked_bytes = 0;
  uint64_t spilled_batches = 0;  // moved from memory to the spool
  uint64_t io_errors = 0;
  // Over the spool's whole life (kept in its state file across restarts); with no spool
  // dir, since Open. Payload bytes.
  uint64_t dropped_batches = 0;
  uint64_t dropped_bytes = 0;
  // The drops since Open, by cause (DropCause): what the agent reports to the collector.
  uint64_t dropped_by_cause[kDropCauseCount] = {};
  // Found by Open's recovery: unacked batches taken back, and records skipped because
  // their ack had been recorded.
  uint64_t recovered_batches = 0;
  uint64_t recovered_bytes = 0;
  uint64_t recovered_acked_skipped = 0;
  // Damaged bytes found at Open (torn tail, crc mismatch) or when a spooled batch is read
  // back: never delivered. A damaged region still on disk at the next Open is counted
  // again there.
  uint64_t torn_records_discarded = 0;
  uint64_t torn_bytes_discarded = 0;
  // Records at Open whose seq did not follow the session's previous one; not delivered.
  uint64_t out_of_order_discarded = 0;
  // The state file failed its crc at Open and was ignored (acks resent, drop counts
  // restart from zero).
  bool state_file_discarded = false;
};

struct OutboxItem {
  OutboxKey key;
  std::string bytes;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_OUTBOX_TYPES_H_
