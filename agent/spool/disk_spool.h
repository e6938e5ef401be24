// DiskSpool: the outbox's on-disk tier — segment files of records (spool_record.h) in a
// checked, locked directory (spool_dir.h), plus the state file (spool_state.h).
//
// It knows records and segments, not queues: the Outbox decides what to append, what to
// release (acked) and which segment to drop; DiskSpool keeps each segment's live-record
// count and deletes a segment file once nothing in it is live. Appends go to one active
// segment; a segment is sealed when the next record would take it past segment_bytes,
// and every Open starts a fresh one, so recovered segments are never appended to (their
// torn tails stay behind the last intact record, where the scanner expects them).
//
// Not thread-safe: the Outbox calls it under its mutex.
#ifndef OPMAP_AGENT_SPOOL_DISK_SPOOL_H_
#define OPMAP_AGENT_SPOOL_DISK_SPOOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/spool/outbox_types.h"
#include "agent/spool/scoped_fd.h"
#include "agent/spool/spool_dir.h"
#include "agent/spool/spool_state.h"

namespace opmap::agent {

// Where one record lives.
struct RecordRef {
  uint64_t segment = 0;
  uint64_t offset = 0;
  uint64_t size = 0;  // whole record
};

struct RecoveredRecord {
  OutboxKey key;
  RecordRef ref;
  uint64_t payload_bytes = 0;
};

// What Open found.
struct SpoolRecovery {
  std::vector<RecoveredRecord> records;  // every intact record, oldest first; all live
  SpoolState state;
  bool state_discarded = false;  // spool.state failed to decode; `state` is empty
  uint64_t damaged_regions = 0;
  uint64_t damaged_bytes = 0;
};

class DiskSpool {
 public:
  static absl::StatusOr<std::unique_ptr<DiskSpool>> Open(const std::string& dir,
                                                         uint64_t segment_bytes, bool fsync,
                                                         SpoolRecovery* recovery);

  // Appends one record (not yet synced). On failure the segment is cut back to its last
  // whole record and sealed; nothing half-written stays live.
  absl::StatusOr<RecordRef> Append(const OutboxKey& key, std::string_view payload);
  // Makes appended records durable (fdatasync), when the fsync option is on.
  absl::Status Sync();
  // The payload of a live record, checked again (crc and key): DataLoss when the disk no
  // longer holds what was written.
  absl::StatusOr<std::string> ReadPayload(const RecordRef& ref, const OutboxKey& key);
  // The record is acked, dropped or discarded. Its segment goes when nothing in it is live.
  absl::Status Release(const RecordRef& ref);
  // Deletes a segment whatever it holds (the Outbox drops its live records first).
  absl::Status RemoveSegment(uint64_t id);
  absl::Status WriteState(const SpoolState& state);

  std::optional<uint64_t> oldest_segment() const;
  uint64_t newest_segment() const { return next_id_ - 1; }
  uint64_t bytes() const { return bytes_; }  // all segment files
  size_t segments() const { return segments_.size(); }

 private:
  struct Segment {
    uint64_t size = 0;  // bytes in the file
    uint64_t live = 0;  // records not yet released
  };

  DiskSpool(std::unique_ptr<SpoolDir> dir, uint64_t segment_bytes, bool fsync)
      : dir_(std::move(dir)), segment_bytes_(segment_bytes), fsync_(fsync) {}
  absl::Status Seal();
  absl::StatusOr<int> ReadFd(uint64_t id);

  std::unique_ptr<SpoolDir> dir_;
  const uint64_t segment_bytes_;
  const bool fsync_;
  std::map<uint64_t, Segment> segments_;  // by id: oldest first
  uint64_t bytes_ = 0;
  uint64_t next_id_ = 1;
  // The segment being appended to: always the newest, or none.
  std::optional<uint64_t> active_id_;
  ScopedFd active_fd_;
  bool active_dirty_ = false;  // written since the last fdatasync
  // The sender reads oldest-first, so one cached read descriptor covers nearly all reads.
  uint64_t read_id_ = 0;
  ScopedFd read_fd_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_DISK_SPOOL_H_
