#include "collector/store/sqlite/sqlite_commit_mark.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace opmap::collector {
namespace {

constexpr size_t kBytes = 16;  // u64 commits | u64 ~commits (little-endian, as written)

}  // namespace

absl::StatusOr<std::unique_ptr<CommitMark>> CommitMark::Open(const std::string& db_path) {
  std::string path = db_path + "-acked";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  }
  uint64_t words[2] = {0, 0};
  const ssize_t n = pread(fd, words, kBytes, 0);
  if (n < 0) {
    const int err = errno;
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot read: %s", path, std::strerror(err)));
  }
  int64_t acknowledged = 0;
  if (n != 0) {
    if (n != static_cast<ssize_t>(kBytes) || words[1] != ~words[0] ||
        words[0] > static_cast<uint64_t>(INT64_MAX)) {
      close(fd);
      return absl::DataLossError(absl::StrFormat(
          "%s: not an opmap commit mark (%d bytes); remove it only if the database beside it "
          "is known to be intact (docs/operations.md, \"A damaged store\")",
          path, n));
    }
    acknowledged = static_cast<int64_t>(words[0]);
  }
  return std::unique_ptr<CommitMark>(new CommitMark(fd, std::move(path), acknowledged));
}

CommitMark::~CommitMark() { close(fd_); }

absl::Status CommitMark::Write(int64_t commits) {
  const uint64_t words[2] = {static_cast<uint64_t>(commits), ~static_cast<uint64_t>(commits)};
  if (pwrite(fd_, words, kBytes, 0) != static_cast<ssize_t>(kBytes)) {
    return absl::InternalError(
        absl::StrFormat("%s: cannot write: %s", path_, std::strerror(errno)));
  }
  acknowledged_ = commits;
  return absl::OkStatus();
}

}  // namespace opmap::collector
