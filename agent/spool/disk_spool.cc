#include "agent/spool/disk_spool.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/spool/segment_scanner.h"
#include "agent/spool/spool_record.h"
#include "common/base/status_macros.h"

namespace opmap::agent {
namespace {

constexpr absl::string_view kStateFile = "spool.state";
// One entry per session with spooled records; far below this in practice.
constexpr uint64_t kMaxStateBytes = uint64_t{64} << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<DiskSpool>> DiskSpool::Open(const std::string& dir,
                                                           uint64_t segment_bytes,
                                                           bool fsync,
                                                           SpoolRecovery* recovery) {
  ASSIGN_OR_RETURN(std::unique_ptr<SpoolDir> spool_dir, SpoolDir::Open(dir));
  std::unique_ptr<DiskSpool> spool(new DiskSpool(std::move(spool_dir), segment_bytes, fsync));
  *recovery = SpoolRecovery();

  ASSIGN_OR_RETURN(std::optional<std::string> state_bytes,
                   spool->dir_->ReadSmallFile(kStateFile, kMaxStateBytes));
  if (state_bytes) {
    absl::StatusOr<SpoolState> state = DecodeSpoolState(*state_bytes);
    // A bad state file only costs resends (the collector drops duplicates) and the old
    // drop counts; refusing to start would cost every spooled batch.
    if (state.ok()) {
      recovery->state = *std::move(state);
    } else {
      recovery->state_discarded = true;
    }
  }

  ASSIGN_OR_RETURN(std::vector<uint64_t> ids, spool->dir_->ListSegments());
  for (uint64_t id : ids) {
    ASSIGN_OR_RETURN(ScopedFd fd, spool->dir_->OpenSegmentForRead(id));
    ASSIGN_OR_RETURN(std::string bytes, spool->dir_->ReadAll(fd.get(), SpoolDir::SegmentName(id)));
    SegmentScan scan = ScanSegment(bytes);
    recovery->damaged_regions += scan.damaged_regions;
    recovery->damaged_bytes += scan.damaged_bytes;
    if (scan.records.empty()) {
      RETURN_IF_ERROR(spool->dir_->RemoveSegment(id));
      continue;
    }
    spool->segments_[id] = Segment{bytes.size(), scan.records.size()};
    spool->bytes_ += bytes.size();
    for (ScannedRecord& r : scan.records) {
      recovery->records.push_back(
          {OutboxKey{std::move(r.session_id), r.seq}, RecordRef{id, r.offset, r.size},
           r.payload_bytes});
    }
  }
  if (!ids.empty()) spool->next_id_ = ids.back() + 1;
  return spool;
}

absl::StatusOr<RecordRef> DiskSpool::Append(const OutboxKey& key, std::string_view payload) {
  const std::string prefix = EncodeRecordPrefix(key.session_id, key.seq, payload);
  const uint64_t size = prefix.size() + payload.size();
  if (active_id_ && segments_[*active_id_].size > 0 &&
      segments_[*active_id_].size + size > segment_bytes_) {
    RETURN_IF_ERROR(Seal());
  }
  if (!active_id_) {
    const uint64_t id = next_id_;
    ASSIGN_OR_RETURN(active_fd_, dir_->CreateSegment(id));
    ++next_id_;
    segments_[id] = Segment{};
    active_id_ = id;
    // The new name must survive a power cut for its records to.
    if (fsync_) RETURN_IF_ERROR(dir_->SyncDir());
  }
  const uint64_t id = *active_id_;
  Segment& seg = segments_[id];
  const uint64_t offset = seg.size;
  absl::Status s = PwriteAll(active_fd_.get(), prefix.data(), prefix.size(), offset);
  if (s.ok()) s = PwriteAll(active_fd_.get(), payload.data(), payload.size(), offset + prefix.size());
  if (!s.ok()) {
    // Cut the partial record off so the next Open does not count it as torn; if even
    // that fails the scanner will find and count it.
    (void)::ftruncate(active_fd_.get(), static_cast<off_t>(offset));
    const bool empty = seg.live == 0;
    (void)Seal();
    if (empty) (void)RemoveSegment(id);
    return absl::Status(s.code(), absl::StrCat(s.message(), " ", dir_->path(), "/",
                                               SpoolDir::SegmentName(id)));
  }
  seg.size += size;
  ++seg.live;
  bytes_ += size;
  active_dirty_ = true;
  return RecordRef{id, offset, size};
}

absl::Status DiskSpool::Sync() {
  if (!fsync_ || !active_dirty_ || !active_fd_.valid()) return absl::OkStatus();
  if (::fdatasync(active_fd_.get()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("spool fdatasync ", dir_->path()));
  }
  active_dirty_ = false;
  return absl::OkStatus();
}

absl::Status DiskSpool::Seal() {
  absl::Status s = Sync();
  active_fd_.Reset();
  active_id_.reset();
  active_dirty_ = false;
  return s;
}

absl::StatusOr<int> DiskSpool::ReadFd(uint64_t id) {
  if (active_id_ && *active_id_ == id) return active_fd_.get();
  if (!read_fd_.valid() || read_id_ != id) {
    read_fd_.Reset();
    ASSIGN_OR_RETURN(read_fd_, dir_->OpenSegmentForRead(id));
    read_id_ = id;
  }
  return read_fd_.get();
}

absl::StatusOr<std::string> DiskSpool::ReadPayload(const RecordRef& ref, const OutboxKey& key) {
  const std::string where = absl::StrCat(dir_->path(), "/", SpoolDir::SegmentName(ref.segment),
                                         " offset ", ref.offset);
  ASSIGN_OR_RETURN(int fd, ReadFd(ref.segment));
  std::string bytes(ref.size, '\0');
  absl::Status s = PreadAll(fd, bytes.data(), bytes.size(), ref.offset);
  if (absl::IsOutOfRange(s)) return absl::DataLossError(absl::StrCat(where, ": file cut short"));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), " ", where));
  ParsedRecord r = ParseRecordAt(bytes, 0);
  if (r.outcome != ParseOutcome::kOk || r.size != ref.size || r.session_id != key.session_id ||
      r.seq != key.seq) {
    return absl::DataLossError(absl::StrCat(where, ": record no longer checks out"));
  }
  return std::string(r.payload);
}

absl::Status DiskSpool::Release(const RecordRef& ref) {
  auto it = segments_.find(ref.segment);
  if (it == segments_.end() || it->second.live == 0) return absl::OkStatus();
  if (--it->second.live > 0) return absl::OkStatus();
  if (active_id_ && *active_id_ == ref.segment) {
    // The sender caught up with the writer: empty the active file and keep writing into
    // it, instead of a create + unlink (+ directory fsyncs) per spilled batch.
    if (::ftruncate(active_fd_.get(), 0) == 0) {
      bytes_ -= it->second.size;
      it->second.size = 0;
      return absl::OkStatus();
    }
  }
  return RemoveSegment(ref.segment);
}

absl::Status DiskSpool::RemoveSegment(uint64_t id) {
  auto it = segments_.find(id);
  if (it == segments_.end()) return absl::OkStatus();
  if (active_id_ && *active_id_ == id) {
    active_fd_.Reset();
    active_id_.reset();
    active_dirty_ = false;
  }
  if (read_fd_.valid() && read_id_ == id) read_fd_.Reset();
  bytes_ -= it->second.size;
  segments_.erase(it);
  // Forgotten even if unlink fails: a file left behind only means resends after a restart.
  return dir_->RemoveSegment(id);
}

absl::Status DiskSpool::WriteState(const SpoolState& state) {
  return dir_->WriteFileAtomic(kStateFile, EncodeSpoolState(state), fsync_);
}

std::optional<uint64_t> DiskSpool::oldest_segment() const {
  if (segments_.empty()) return std::nullopt;
  return segments_.begin()->first;
}

}  // namespace opmap::agent
