// SpoolDir: the spool's directory, checked and locked. Everything on disk goes through
// the directory fd (openat/unlinkat/renameat with O_NOFOLLOW), never through a path that
// could be swapped for a symlink after the checks.
//
// Open refuses, with the path and the reason: a symlink, a non-directory, a directory not
// owned by our effective uid, one writable by group or others (anyone who can plant a
// segment file there could make us send forged batches), and one another process holds
// (flock on "spool.lock"; two writers would corrupt the segments). A missing directory is
// created 0700; its parent must exist.
//
// Files: spool-<16 hex digits>.log (segments, ids increasing), spool.state (+ .tmp),
// spool.lock. Anything else in the directory is left alone.
#ifndef OPMAP_AGENT_SPOOL_SPOOL_DIR_H_
#define OPMAP_AGENT_SPOOL_SPOOL_DIR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/spool/scoped_fd.h"

namespace opmap::agent {

class SpoolDir {
 public:
  static absl::StatusOr<std::unique_ptr<SpoolDir>> Open(const std::string& path);

  const std::string& path() const { return path_; }
  static std::string SegmentName(uint64_t id);

  // Segment ids present, ascending. A segment name that is not a regular file is an error.
  absl::StatusOr<std::vector<uint64_t>> ListSegments() const;
  // A new, empty segment (fails if it exists), opened read-write.
  absl::StatusOr<ScopedFd> CreateSegment(uint64_t id) const;
  absl::StatusOr<ScopedFd> OpenSegmentForRead(uint64_t id) const;
  absl::Status RemoveSegment(uint64_t id) const;
  absl::StatusOr<std::string> ReadAll(int fd, absl::string_view name) const;

  // nullopt when the file does not exist.
  absl::StatusOr<std::optional<std::string>> ReadSmallFile(absl::string_view name,
                                                          uint64_t max_bytes) const;
  // Write `name`.tmp, optionally fsync it, rename over `name`, optionally fsync the dir.
  absl::Status WriteFileAtomic(absl::string_view name, absl::string_view bytes,
                               bool fsync) const;
  absl::Status SyncDir() const;

 private:
  SpoolDir(std::string path, ScopedFd dir, ScopedFd lock)
      : path_(std::move(path)), dir_(std::move(dir)), lock_(std::move(lock)) {}
  absl::Status Error(int err, absl::string_view what, absl::string_view name) const;
  absl::Status Annotate(const absl::Status& s, absl::string_view name) const;

  std::string path_;
  ScopedFd dir_;
  ScopedFd lock_;  // holds the flock while we live
};

// Writes all of `n` bytes at `offset`, retrying short writes and EINTR.
absl::Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset);
// Reads exactly `n` bytes at `offset`; OutOfRange if the file ends first.
absl::Status PreadAll(int fd, void* data, size_t n, uint64_t offset);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_SPOOL_DIR_H_
