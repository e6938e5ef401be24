// The Outbox's sender side: handing out unacked batches (reading spooled ones back and
// checking them), Rewind after a reconnect, and cumulative per-session Acks.
#include <algorithm>
#include <string>

#include "agent/spool/outbox.h"

namespace opmap::agent {

absl::StatusOr<std::optional<OutboxItem>> Outbox::NextUnsent() {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("outbox: closed");
  uint64_t ord = std::max(send_cursor_, base_);
  std::optional<OutboxItem> item;
  for (; ord < EndLocked(); ++ord) {
    Entry& e = At(ord);
    if (!e.live) continue;
    OutboxKey key{e.session->id, e.seq};
    if (!e.on_disk) {
      item = OutboxItem{std::move(key), e.payload};
      ++ord;
      break;
    }
    absl::StatusOr<std::string> payload = disk_->ReadPayload(e.ref, key);
    if (payload.ok()) {
      item = OutboxItem{std::move(key), *std::move(payload)};
      ++ord;
      break;
    }
    if (!absl::IsDataLoss(payload.status())) {
      NoteError(payload.status());
      send_cursor_ = ord;
      return payload.status();
    }
    // Changed on disk since it was written: never deliver it; count it.
    ++stats_.torn_records_discarded;
    stats_.torn_bytes_discarded += e.ref.size;
    const RecordRef ref = e.ref;
    KillLocked(ord);
    NoteError(disk_->Release(ref));
    // Nothing after it in its session can be stored by the collector (seq order).
    DropRestOfSessionLocked(key.session_id, key.seq);
    MaybePruneLocked(key.session_id);
  }
  send_cursor_ = ord;
  PopDeadFrontLocked();
  return item;
}

bool Outbox::HasUnsentLocked() const {
  if (closed_) return true;
  for (uint64_t ord = std::max(send_cursor_, base_); ord < base_ + entries_.size(); ++ord) {
    if (entries_[ord - base_].live) return true;
  }
  return false;
}

bool Outbox::WaitForUnsent(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(this, &Outbox::HasUnsentLocked), timeout);
}

void Outbox::Rewind() {
  absl::MutexLock lock(&mu_);
  send_cursor_ = base_;
}

absl::Status Outbox::Ack(std::string_view session_id, uint64_t durable_seq) {
  absl::MutexLock lock(&mu_);
  // Abseil here may not use std::string_view, so no heterogeneous lookup.
  auto it = sessions_.find(std::string(session_id));
  if (it == sessions_.end()) return absl::OkStatus();
  Session& s = it->second;
  absl::Status status;
  while (!s.live.empty() && At(s.live.front()).seq <= durable_seq) {
    const uint64_t ord = s.live.front();
    Entry& e = At(ord);
    ++stats_.acked_batches;
    stats_.acked_bytes += e.bytes;
    const bool on_disk = e.on_disk;
    const RecordRef ref = e.ref;
    KillLocked(ord);
    if (on_disk) {
      absl::Status r = disk_->Release(ref);
      NoteError(r);
      status.Update(r);
      state_dirty_ = true;
    }
  }
  s.acked = std::max(s.acked, durable_seq);
  PopDeadFrontLocked();
  MaybePruneLocked(std::string(session_id));
  status.Update(WriteStateLocked(/*force=*/false));
  return status;
}

}  // namespace opmap::agent
