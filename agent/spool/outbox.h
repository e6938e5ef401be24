// Outbox: the agent's bounded store of serialized opmap.v1.Batch messages that the
// collector has not acked yet — memory first, then an on-disk spool — so that nothing is
// lost while the collector is slow, down or unreachable, and nothing the agent spooled is
// lost to a SIGKILL. (Batches still in memory at a SIGKILL are lost; Spill() and Close()
// move them to disk.)
//
//   Push ─▶ [ spool (oldest) | memory (newest) ] ─▶ NextUnsent ─▶ sender ─▶ collector
//                  ▲ drop oldest segment when full       Ack(session, seq) ◀─┘
//
// Order: one global queue in push order. Memory holds its newest part and the spool its
// oldest: when memory passes memory_bytes the oldest batches in memory are appended to
// the spool; when the spool would pass spool_bytes its oldest segment is dropped (each
// batch in it counted in dropped_batches/dropped_bytes). Without a spool dir, the oldest
// batch in memory is dropped instead. Nothing is dropped for any other reason, except a
// spooled record that fails its crc (counted as torn, never delivered).
//
// Sending: NextUnsent() hands out unacked batches oldest first (so each session's in seq
// order), reading spooled ones back from disk; Rewind() starts again from the oldest
// unacked, for resending after a reconnect. Ack(session, seq) is cumulative per session,
// as the collector's Ack is: every batch of that session with seq <= durable_seq goes.
//
// Restart: Open() scans the spool: every intact record not acked (per the state file) is
// back in the queue, in order, byte-identical; damaged bytes are counted and skipped.
//
// Thread safety: every method may be called from any thread (one mutex). Push may block
// on disk writes (and fdatasync) when it spills; it never waits on the network. Intended
// use: producer threads Push, one sender thread NextUnsent/Rewind/Ack.
//
//   ASSIGN_OR_RETURN(auto outbox, Outbox::Open({.spool_dir = "/var/lib/opmap/spool"}));
//   RETURN_IF_ERROR(outbox->Push({session, seq}, batch.SerializeAsString()));
//   // sender thread:
//   while (outbox->WaitForUnsent(absl::Seconds(1))) {
//     ASSIGN_OR_RETURN(std::optional<OutboxItem> item, outbox->NextUnsent());
//     if (item) stream->Write(item->bytes);
//   }
//   // on Ack:        outbox->Ack(ack.session_id(), ack.durable_seq());
//   // on reconnect:  outbox->Rewind();   on stream failure: outbox->Spill();
#ifndef OPMAP_AGENT_SPOOL_OUTBOX_H_
#define OPMAP_AGENT_SPOOL_OUTBOX_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/spool/disk_spool.h"
#include "agent/spool/outbox_types.h"

namespace opmap::agent {

class Outbox {
 public:
  // Checks the options, opens (or creates) the spool dir and recovers what it holds.
  static absl::StatusOr<std::unique_ptr<Outbox>> Open(const OutboxOptions& options);
  ~Outbox();  // Close(), errors ignored
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Takes one batch. InvalidArgument for a bad key (empty or too long session id, seq 0,
  // seq not above the session's previous one); ResourceExhausted when the batch alone is
  // larger than the spool (dropped and counted); an I/O error when spilling failed (the
  // batch that could not be spilled is dropped and counted, to keep memory bounded).
  absl::Status Push(OutboxKey key, std::string batch);

  // The oldest unacked batch not handed out since the last Rewind, or nullopt.
  absl::StatusOr<std::optional<OutboxItem>> NextUnsent();
  // Waits until NextUnsent has something or the outbox is closed; false on timeout.
  bool WaitForUnsent(absl::Duration timeout);
  // NextUnsent starts again from the oldest unacked batch.
  void Rewind();
  // Drops every batch of `session_id` with seq <= durable_seq. Unknown sessions and seqs
  // already gone are fine (acks repeat after reconnects).
  absl::Status Ack(std::string_view session_id, uint64_t durable_seq);

  // Moves every batch in memory to the spool (the collector is unreachable, or shutdown).
  // On an error the rest stay in memory.
  absl::Status Spill();
  // Spill(), sync, write the state file. Afterwards Push and NextUnsent fail.
  absl::Status Close();

  OutboxStats stats() const;
  // Whether batch `key` is still here, unacked and not dropped.
  bool Holds(const OutboxKey& key) const;

 private:
  struct Session {
    std::string id;
    uint64_t last_pushed = 0;
    uint64_t acked = 0;
    std::deque<uint64_t> live;  // ordinals of this session's unacked batches, oldest first
    // Newest segment that holds (or held) one of its records: its ack must be kept in
    // the state file while that segment exists.
    std::optional<uint64_t> last_segment;
  };
  struct Entry {
    Session* session = nullptr;  // only while live
    uint64_t seq = 0;
    uint64_t bytes = 0;    // payload
    std::string payload;   // while in memory
    RecordRef ref;         // while spooled
    bool on_disk = false;
    bool live = true;
  };

  explicit Outbox(const OutboxOptions& options) : options_(options) {}
  absl::Status RecoverLocked(SpoolRecovery recovery) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Entry& At(uint64_t ord) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entries_[ord - base_]; }
  uint64_t EndLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return base_ + entries_.size();
  }
  Session& SessionLocked(std::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status EvictOldestMemoryLocked(bool keep_on_error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteToDiskLocked(uint64_t ord) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DropOldestSegmentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropLocked(uint64_t ord, DropCause cause) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountDropLocked(DropCause cause, uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After batch `lost_seq` of session `id` was lost: drops its later batches (counted)
  // and remembers the session so later pushes of it are dropped too.
  void DropRestOfSessionLocked(const std::string& id, uint64_t lost_seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void KillLocked(uint64_t ord) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PopDeadFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool PrunableLocked(const Session& s) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybePruneLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SpillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteStateLocked(bool force) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasUnsentLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NoteError(const absl::Status& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!s.ok()) ++stats_.io_errors;
  }

  const OutboxOptions options_;
  mutable absl::Mutex mu_;
  std::unique_ptr<DiskSpool> disk_ ABSL_GUARDED_BY(mu_);  // null: memory only
  // Ordinal = position in push order since Open. entries_[i] has ordinal base_ + i; dead
  // entries are popped from the front only, so ordinals stay stable.
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t base_ ABSL_GUARDED_BY(mu_) = 0;
  // Every live entry below mem_front_ is spooled; memory holds a suffix of the queue.
  uint64_t mem_front_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t send_cursor_ ABSL_GUARDED_BY(mu_) = 0;  // next ordinal NextUnsent looks at
  // node_hash_map: entries point at their Session.
  absl::node_hash_map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
  // Sessions that lost a batch: the collector stores a session's batches only in seq
  // order, so nothing after a lost one can ever be stored. Their later batches are dropped
  // (counted) rather than spooled and resent forever. Bounded: the oldest are forgotten.
  absl::flat_hash_set<std::string> poisoned_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> poisoned_order_ ABSL_GUARDED_BY(mu_);
  OutboxStats stats_ ABSL_GUARDED_BY(mu_);
  bool state_dirty_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_state_write_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_OUTBOX_H_
