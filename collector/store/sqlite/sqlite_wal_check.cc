#include "collector/store/sqlite/sqlite_wal_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"

namespace opmap::collector {
namespace {

constexpr uint32_t kMagicLittle = 0x377f0682;  // checksums over little-endian words
constexpr uint32_t kMagicBig = 0x377f0683;     // ... over big-endian words
constexpr size_t kHeaderBytes = 32;
constexpr size_t kFrameHeaderBytes = 24;

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint32_t LittleEndian32(const uint8_t* p) {
  return (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | p[0];
}

// SQLite's WAL checksum: over pairs of 32-bit words, continuing from (s[0], s[1]).
void Checksum(const uint8_t* data, size_t bytes, bool big_endian, uint32_t s[2]) {
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    const uint32_t x0 = big_endian ? BigEndian32(data + i) : LittleEndian32(data + i);
    const uint32_t x1 = big_endian ? BigEndian32(data + i + 4) : LittleEndian32(data + i + 4);
    s[0] += x0 + s[1];
    s[1] += x1 + s[0];
  }
}

bool ReadAt(int fd, uint8_t* out, size_t bytes, off_t offset) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pread(fd, out + done, bytes - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

absl::Status Damaged(const std::string& wal, const std::string& what) {
  return absl::DataLossError(absl::StrFormat("%s: %s", wal, what));
}

}  // namespace

absl::Status CheckWalFile(const std::string& db_path, uint64_t* damaged_from) {
  if (damaged_from != nullptr) *damaged_from = 0;
  const std::string wal = db_path + "-wal";
  const int fd = open(wal.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot read: %s", wal, std::strerror(errno)));
  }
  FdCloser closer{fd};
  struct stat st{};
  if (fstat(fd, &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot stat: %s", wal, std::strerror(errno)));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes) return absl::OkStatus();  // nothing written yet: SQLite resets it

  uint8_t header[kHeaderBytes];
  if (!ReadAt(fd, header, kHeaderBytes, 0)) return Damaged(wal, "the header cannot be read");
  const uint32_t magic = BigEndian32(header);
  const uint32_t page_size = BigEndian32(header + 8);
  const bool frames_follow = size >= kHeaderBytes + kFrameHeaderBytes;
  // No magic: a log SQLite never started (or zeroed at a reset); it ignores the file.
  if (magic != kMagicLittle && magic != kMagicBig) return absl::OkStatus();
  const bool big = magic == kMagicBig;
  uint32_t sum[2] = {0, 0};
  Checksum(header, 24, big, sum);
  if (sum[0] != BigEndian32(header + 24) || sum[1] != BigEndian32(header + 28)) {
    if (!frames_follow) return absl::OkStatus();
    return Damaged(wal, "the header fails its checksum while frames follow it");
  }
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) {
    return Damaged(wal, absl::StrFormat("the header names page size %d", page_size));
  }
  const uint32_t salt1 = BigEndian32(header + 16), salt2 = BigEndian32(header + 20);
  const size_t frame_bytes = kFrameHeaderBytes + page_size;
  std::vector<uint8_t> frame(frame_bytes);
  uint64_t index = 0;
  for (uint64_t offset = kHeaderBytes; offset + frame_bytes <= size; offset += frame_bytes) {
    ++index;
    if (!ReadAt(fd, frame.data(), frame_bytes, static_cast<off_t>(offset))) {
      if (damaged_from != nullptr) *damaged_from = offset;
      return Damaged(wal, absl::StrFormat("frame %d (offset %d) cannot be read", index, offset));
    }
    const bool current = BigEndian32(frame.data() + 8) == salt1 &&
                         BigEndian32(frame.data() + 12) == salt2;
    // A frame of an older generation ends the log: SQLite rewinds the WAL after a
    // checkpoint and leaves the old frames behind it.
    if (!current) return absl::OkStatus();
    uint32_t next[2] = {sum[0], sum[1]};
    Checksum(frame.data(), 8, big, next);
    Checksum(frame.data() + kFrameHeaderBytes, page_size, big, next);
    if (next[0] != BigEndian32(frame.data() + 16) || next[1] != BigEndian32(frame.data() + 20)) {
      // The last frames of the log failing is what a kill in mid-write leaves (an
      // uncommitted, unacknowledged transaction; the commit mark tells the rest). A
      // frame of this generation *after* the bad one means the log went on past it.
      for (uint64_t later = offset + frame_bytes; later + kFrameHeaderBytes <= size;
           later += frame_bytes) {
        uint8_t h[kFrameHeaderBytes];
        if (!ReadAt(fd, h, kFrameHeaderBytes, static_cast<off_t>(later))) break;
        if (BigEndian32(h + 8) == salt1 && BigEndian32(h + 12) == salt2) {
          if (damaged_from != nullptr) *damaged_from = offset;
          return Damaged(wal, absl::StrFormat("frame %d (offset %d, page %d) fails its "
                                              "checksum and the log continues after it",
                                              index, offset, BigEndian32(frame.data())));
        }
      }
      return absl::OkStatus();
    }
    sum[0] = next[0];
    sum[1] = next[1];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> KeepWalTail(const std::string& db_path, uint64_t from) {
  const std::string wal = db_path + "-wal";
  const int in = open(wal.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot read: %s", wal, std::strerror(errno)));
  }
  FdCloser in_closer{in};
  struct stat st{};
  if (fstat(in, &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot stat: %s", wal, std::strerror(errno)));
  }
  // Named by the log's modification time: a collector restarted again and again on the
  // same damaged log (a service manager's restarts) keeps one copy, not one per start.
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  from = std::min(from, size);
  const std::string copy = absl::StrFormat("%s.damaged-%d.%09d-from-%d", wal,
                                           static_cast<int64_t>(st.st_mtim.tv_sec),
                                           static_cast<int64_t>(st.st_mtim.tv_nsec), from);
  const int out = open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0 && errno == EEXIST) {
    struct stat kept{};
    if (stat(copy.c_str(), &kept) == 0 && static_cast<uint64_t>(kept.st_size) == size - from) {
      return copy;
    }
  }
  if (out < 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot create a copy of %s: %s", copy, wal, std::strerror(errno)));
  }
  FdCloser out_closer{out};
  std::vector<uint8_t> buf(1 << 20);
  for (uint64_t at = from;;) {
    const ssize_t n = pread(in, buf.data(), buf.size(), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s: cannot read: %s", wal, std::strerror(errno)));
    }
    if (n == 0) break;
    at += static_cast<uint64_t>(n);
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        const int err = errno;
        unlink(copy.c_str());
        return absl::ResourceExhaustedError(absl::StrFormat(
            "%s: cannot write a copy of %s: %s", copy, wal, std::strerror(err)));
      }
      done += w;
    }
  }
  if (fsync(out) != 0) {
    const int err = errno;
    unlink(copy.c_str());
    return absl::ResourceExhaustedError(
        absl::StrFormat("%s: cannot sync a copy of %s: %s", copy, wal, std::strerror(err)));
  }
  return copy;
}

}  // namespace opmap::collector
