// The Outbox's persistence outside the hot path: Open (recovering a spool after a crash
// or a clean Close) and the state file write.
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/spool/outbox.h"
#include "common/base/status_macros.h"

namespace opmap::agent {

absl::StatusOr<std::unique_ptr<Outbox>> Outbox::Open(const OutboxOptions& options) {
  if (!options.spool_dir.empty() && (options.spool_bytes == 0 || options.segment_bytes == 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "outbox: spool_bytes (", options.spool_bytes, ") and segment_bytes (",
        options.segment_bytes, ") must be > 0 with a spool dir"));
  }
  std::unique_ptr<Outbox> outbox(new Outbox(options));
  if (options.spool_dir.empty()) return outbox;
  SpoolRecovery recovery;
  ASSIGN_OR_RETURN(std::unique_ptr<DiskSpool> disk,
                   DiskSpool::Open(options.spool_dir, options.segment_bytes, options.fsync,
                                   &recovery));
  absl::MutexLock lock(&outbox->mu_);
  outbox->disk_ = std::move(disk);
  RETURN_IF_ERROR(outbox->RecoverLocked(std::move(recovery)));
  return outbox;
}

absl::Status Outbox::RecoverLocked(SpoolRecovery recovery) {
  stats_.dropped_batches = recovery.state.dropped_batches;
  stats_.dropped_bytes = recovery.state.dropped_bytes;
  stats_.state_file_discarded = recovery.state_discarded;
  stats_.torn_records_discarded = recovery.damaged_regions;
  stats_.torn_bytes_discarded = recovery.damaged_bytes;

  // Acks recorded for sessions whose records may still sit in the recovered segments.
  std::optional<uint64_t> newest;
  if (disk_->segments() > 0) newest = disk_->newest_segment();
  for (auto& [session_id, acked] : recovery.state.acked) {
    Session& s = SessionLocked(session_id);
    s.acked = std::max(s.acked, acked);
    s.last_segment = newest;
  }

  absl::Status status;
  for (RecoveredRecord& r : recovery.records) {
    Session& s = SessionLocked(r.key.session_id);
    if (r.key.seq <= s.acked || r.key.seq <= s.last_pushed) {
      // Acked before the restart (its segment was only partly acked), or a seq that does
      // not follow the session's previous record (a writer bug: never observed).
      ++(r.key.seq <= s.acked ? stats_.recovered_acked_skipped : stats_.out_of_order_discarded);
      absl::Status released = disk_->Release(r.ref);
      NoteError(released);
      status.Update(released);
      continue;
    }
    s.last_pushed = r.key.seq;
    s.last_segment = r.ref.segment;
    Entry e;
    e.session = &s;
    e.seq = r.key.seq;
    e.bytes = r.payload_bytes;
    e.ref = r.ref;
    e.on_disk = true;
    entries_.push_back(std::move(e));
    s.live.push_back(EndLocked() - 1);
    ++stats_.spool_batches;
    stats_.spool_batch_bytes += r.payload_bytes;
    ++stats_.recovered_batches;
    stats_.recovered_bytes += r.payload_bytes;
  }
  mem_front_ = EndLocked();
  // Reopened with a smaller spool_bytes: the cap holds from the start.
  while (disk_->bytes() > options_.spool_bytes && disk_->oldest_segment()) {
    status.Update(DropOldestSegmentLocked());
  }
  // Rewrite the state now: it drops acks that no remaining segment needs.
  state_dirty_ = true;
  status.Update(WriteStateLocked(/*force=*/true));
  return status;
}

absl::Status Outbox::WriteStateLocked(bool force) {
  if (!disk_ || !state_dirty_) return absl::OkStatus();
  const absl::Time now = absl::Now();
  if (!force && now - last_state_write_ < options_.state_write_interval) {
    return absl::OkStatus();
  }
  SpoolState state;
  state.dropped_batches = stats_.dropped_batches;
  state.dropped_bytes = stats_.dropped_bytes;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (PrunableLocked(it->second)) {
      sessions_.erase(it++);
      continue;
    }
    if (it->second.acked > 0 && it->second.last_segment) {
      state.acked.emplace_back(it->first, it->second.acked);
    }
    ++it;
  }
  absl::Status s = disk_->WriteState(state);
  NoteError(s);
  if (s.ok()) {
    state_dirty_ = false;
    last_state_write_ = now;
  }
  return s;
}

}  // namespace opmap::agent
