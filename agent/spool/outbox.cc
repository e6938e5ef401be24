#include "agent/spool/outbox.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/spool/spool_record.h"
#include "common/base/status_macros.h"

namespace opmap::agent {
namespace {
constexpr size_t kMaxPoisonedSessions = 4096;
}  // namespace

// Producer side and the shared bookkeeping. The sender side (NextUnsent, Rewind, Ack) is
// in outbox_sender.cc; Open, recovery and the state file in outbox_recovery.cc.

Outbox::~Outbox() { Close().IgnoreError(); }

Outbox::Session& Outbox::SessionLocked(std::string_view id) {
  auto [it, inserted] = sessions_.try_emplace(std::string(id));
  if (inserted) it->second.id = it->first;
  return it->second;
}

const char* DropCauseName(DropCause cause) {
  switch (cause) {
    case DropCause::kQueueFull: return "queue full";
    case DropCause::kTooLarge: return "too large";
    case DropCause::kSpoolFull: return "spool full";
    case DropCause::kWriteError: return "spool write error";
    case DropCause::kSessionLost: return "session lost";
  }
  return "?";
}

absl::Status Outbox::Push(OutboxKey key, std::string batch) {
  if (key.session_id.empty() || key.session_id.size() > kMaxSessionIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("outbox push: session id of ",
                                                   key.session_id.size(), " bytes"));
  }
  if (key.seq == 0) return absl::InvalidArgumentError("outbox push: seq 0");
  if (batch.size() > kMaxRecordBodyBytes - kRecordKeyFixedBytes - kMaxSessionIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("outbox push: batch of ", batch.size(),
                                                   " bytes is too large to spool"));
  }
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("outbox push: closed");
  if (poisoned_.contains(key.session_id)) {
    CountDropLocked(DropCause::kSessionLost, batch.size());
    return absl::ResourceExhaustedError(absl::StrCat(
        "outbox: session ", key.session_id, " already lost a batch to the spool cap; its batch ",
        key.seq, " could never be stored: dropped"));
  }
  Session& s = SessionLocked(key.session_id);
  if (key.seq <= s.last_pushed) {
    return absl::InvalidArgumentError(absl::StrCat("outbox push: session ", key.session_id,
                                                   " seq ", key.seq, " after seq ",
                                                   s.last_pushed));
  }
  s.last_pushed = key.seq;
  const uint64_t bytes = batch.size();
  ++stats_.pushed_batches;
  stats_.pushed_bytes += bytes;
  if (!disk_ && bytes > options_.memory_bytes) {
    // It can never be kept; making room for it would only drop others as well.
    CountDropLocked(DropCause::kTooLarge, bytes);
    MaybePruneLocked(key.session_id);
    return absl::ResourceExhaustedError(absl::StrCat(
        "outbox: batch ", key.session_id, "/", key.seq, " of ", bytes,
        " bytes is larger than memory_bytes and there is no spool; dropped"));
  }
  Entry e;
  e.session = &s;
  e.seq = key.seq;
  e.bytes = bytes;
  e.payload = std::move(batch);
  entries_.push_back(std::move(e));
  s.live.push_back(EndLocked() - 1);
  ++stats_.memory_batches;
  stats_.memory_bytes += bytes;

  // The new batch is counted first, so one larger than memory_bytes goes to disk at once,
  // after everything older.
  absl::Status status;
  bool spilled = false;
  while (stats_.memory_bytes > options_.memory_bytes && stats_.memory_batches > 0) {
    status.Update(EvictOldestMemoryLocked(/*keep_on_error=*/false));
    spilled = true;
  }
  if (spilled && disk_) {
    absl::Status synced = disk_->Sync();
    NoteError(synced);
    status.Update(synced);
  }
  status.Update(WriteStateLocked(/*force=*/false));
  return status;
}

absl::Status Outbox::EvictOldestMemoryLocked(bool keep_on_error) {
  while (mem_front_ < EndLocked() && (!At(mem_front_).live || At(mem_front_).on_disk)) {
    ++mem_front_;
  }
  const uint64_t ord = mem_front_;
  if (!disk_) {
    DropLocked(ord, DropCause::kQueueFull);
    return absl::OkStatus();
  }
  absl::Status s = WriteToDiskLocked(ord);
  // Still in memory after a failed write: drop it, or memory would grow past its bound.
  // (It may already be gone: dropped as larger than the spool, and popped.)
  if (!s.ok() && !keep_on_error && ord >= base_ && At(ord).live && !At(ord).on_disk) {
    DropLocked(ord, DropCause::kWriteError);
  }
  return s;
}

absl::Status Outbox::WriteToDiskLocked(uint64_t ord) {
  Entry& e = At(ord);
  const uint64_t record = SpoolRecordSize(e.session->id.size(), e.bytes);
  if (record > options_.spool_bytes) {
    const std::string what = absl::StrCat("outbox: batch ", e.session->id, "/", e.seq, " of ",
                                          e.bytes, " bytes does not fit in spool_bytes ",
                                          options_.spool_bytes, "; dropped");
    DropLocked(ord, DropCause::kTooLarge);
    return absl::ResourceExhaustedError(what);
  }
  // A failed state write or unlink while dropping is counted and reported, but the
  // space is accounted free either way, so the batch can still be spooled.
  absl::Status status;
  while (disk_->bytes() + record > options_.spool_bytes) {
    if (!disk_->oldest_segment()) {
      return absl::InternalError("outbox: spool over its cap but holds no segment");
    }
    status.Update(DropOldestSegmentLocked());
  }
  // The drop may have taken this batch too (its session lost an older one).
  if (ord < base_ || !At(ord).live) return status;
  // `e` is still valid: deques keep references on pop_front of other elements.
  absl::StatusOr<RecordRef> ref = disk_->Append(OutboxKey{e.session->id, e.seq}, e.payload);
  if (!ref.ok()) {
    NoteError(ref.status());
    return ref.status();
  }
  e.on_disk = true;
  e.ref = *ref;
  std::string().swap(e.payload);
  e.session->last_segment = ref->segment;
  --stats_.memory_batches;
  stats_.memory_bytes -= e.bytes;
  ++stats_.spool_batches;
  stats_.spool_batch_bytes += e.bytes;
  ++stats_.spilled_batches;
  return status;
}

absl::Status Outbox::DropOldestSegmentLocked() {
  const std::optional<uint64_t> id = disk_->oldest_segment();
  if (!id) return absl::OkStatus();
  // The spool holds the oldest part of the queue, in segment order: the live records of
  // the oldest segment are the first live entries.
  std::vector<std::string> touched;
  std::vector<std::pair<std::string, uint64_t>> lost;  // (session, seq) dropped here
  for (uint64_t ord = base_; ord < EndLocked(); ++ord) {
    Entry& e = At(ord);
    if (!e.live) continue;
    if (!e.on_disk || e.ref.segment != *id) break;
    CountDropLocked(DropCause::kSpoolFull, e.bytes);
    touched.push_back(e.session->id);
    lost.emplace_back(e.session->id, e.seq);
    KillLocked(ord);
  }
  // Persist the counts before the records go, so that a crash between the two can only
  // resend a dropped batch, never lose a drop from the counts.
  state_dirty_ = true;
  absl::Status status = WriteStateLocked(/*force=*/true);
  absl::Status removed = disk_->RemoveSegment(*id);
  NoteError(removed);
  status.Update(removed);
  for (const auto& [session, seq] : lost) DropRestOfSessionLocked(session, seq);
  PopDeadFrontLocked();
  for (const std::string& s : touched) MaybePruneLocked(s);
  return status;
}

bool Outbox::Holds(const OutboxKey& key) const {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(key.session_id);
  if (it == sessions_.end()) return false;
  for (uint64_t ord : it->second.live) {
    if (entries_[ord - base_].seq == key.seq) return true;
  }
  return false;
}

void Outbox::CountDropLocked(DropCause cause, uint64_t bytes) {
  ++stats_.dropped_batches;
  stats_.dropped_bytes += bytes;
  ++stats_.dropped_by_cause[static_cast<int>(cause)];
}

void Outbox::DropLocked(uint64_t ord, DropCause cause) {
  Entry& e = At(ord);
  CountDropLocked(cause, e.bytes);
  const std::string session = e.session->id;
  const uint64_t seq = e.seq;
  KillLocked(ord);
  DropRestOfSessionLocked(session, seq);
  PopDeadFrontLocked();
  MaybePruneLocked(session);
  state_dirty_ = true;
}

void Outbox::DropRestOfSessionLocked(const std::string& id, uint64_t lost_seq) {
  if (poisoned_.insert(id).second) {
    poisoned_order_.push_back(id);
    if (poisoned_order_.size() > kMaxPoisonedSessions) {
      poisoned_.erase(poisoned_order_.front());
      poisoned_order_.pop_front();
    }
  }
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  // Batches before the lost one may still be delivered; those after it never can.
  std::vector<uint64_t> after;
  for (uint64_t ord : s.live) {
    if (At(ord).seq > lost_seq) after.push_back(ord);
  }
  for (uint64_t ord : after) {
    Entry& e = At(ord);
    CountDropLocked(DropCause::kSessionLost, e.bytes);
    const bool on_disk = e.on_disk;
    const RecordRef ref = e.ref;
    KillLocked(ord);
    if (on_disk) NoteError(disk_->Release(ref));
  }
  // With nothing older left either, the whole session is settled: recorded like an ack
  // in the state file, so a restart does not resend what is still inside a segment.
  if (s.live.empty()) s.acked = std::max(s.acked, s.last_pushed);
  state_dirty_ = true;
}

void Outbox::KillLocked(uint64_t ord) {
  Entry& e = At(ord);
  std::deque<uint64_t>& live = e.session->live;
  if (!live.empty() && live.front() == ord) {
    live.pop_front();
  } else if (auto it = std::find(live.begin(), live.end(), ord); it != live.end()) {
    live.erase(it);  // not the session's oldest: only a batch discarded as damaged
  }
  if (e.on_disk) {
    --stats_.spool_batches;
    stats_.spool_batch_bytes -= e.bytes;
  } else {
    --stats_.memory_batches;
    stats_.memory_bytes -= e.bytes;
    std::string().swap(e.payload);
  }
  e.live = false;
  e.session = nullptr;
}

void Outbox::PopDeadFrontLocked() {
  while (!entries_.empty() && !entries_.front().live) {
    entries_.pop_front();
    ++base_;
  }
  mem_front_ = std::max(mem_front_, base_);
  send_cursor_ = std::max(send_cursor_, base_);
}

bool Outbox::PrunableLocked(const Session& s) const {
  if (!s.live.empty()) return false;
  // Its ack must stay in the state file while a segment may still hold its records.
  if (!s.last_segment || !disk_) return true;
  std::optional<uint64_t> oldest = disk_->oldest_segment();
  return !oldest || *oldest > *s.last_segment;
}

void Outbox::MaybePruneLocked(const std::string& id) {
  auto it = sessions_.find(id);
  if (it != sessions_.end() && PrunableLocked(it->second)) sessions_.erase(it);
}

absl::Status Outbox::SpillLocked() {
  if (!disk_) return absl::OkStatus();
  absl::Status status;
  while (stats_.memory_batches > 0) {
    absl::Status s = EvictOldestMemoryLocked(/*keep_on_error=*/true);
    status.Update(s);
    // ResourceExhausted: that one batch was dropped (larger than the spool); go on.
    if (!s.ok() && !absl::IsResourceExhausted(s)) break;
  }
  absl::Status synced = disk_->Sync();
  NoteError(synced);
  status.Update(synced);
  return status;
}

absl::Status Outbox::Spill() {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("outbox: closed");
  absl::Status status = SpillLocked();
  status.Update(WriteStateLocked(/*force=*/false));
  return status;
}

absl::Status Outbox::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  absl::Status status = SpillLocked();
  status.Update(WriteStateLocked(/*force=*/true));
  closed_ = true;
  return status;
}

OutboxStats Outbox::stats() const {
  absl::MutexLock lock(&mu_);
  OutboxStats s = stats_;
  if (disk_) {
    s.spool_bytes = disk_->bytes();
    s.spool_segments = disk_->segments();
  }
  return s;
}

}  // namespace opmap::agent
