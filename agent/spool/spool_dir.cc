#include "agent/spool/spool_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"

namespace opmap::agent {
namespace {

constexpr absl::string_view kSegmentPrefix = "spool-";
constexpr absl::string_view kSegmentSuffix = ".log";
constexpr size_t kSegmentHexDigits = 16;

absl::Status Refuse(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("spool dir ", path, ": ", why));
}

std::optional<uint64_t> ParseSegmentName(absl::string_view name) {
  if (name.size() != kSegmentPrefix.size() + kSegmentHexDigits + kSegmentSuffix.size() ||
      !absl::StartsWith(name, kSegmentPrefix) || !absl::EndsWith(name, kSegmentSuffix)) {
    return std::nullopt;
  }
  absl::string_view hex = name.substr(kSegmentPrefix.size(), kSegmentHexDigits);
  uint64_t id = 0;
  for (char c : hex) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    id = (id << 4) | static_cast<uint64_t>(d);
  }
  return id;
}

}  // namespace

absl::Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return absl::ErrnoToStatus(errno, "spool write");
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

absl::Status PreadAll(int fd, void* data, size_t n, uint64_t offset) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::ErrnoToStatus(errno, "spool read");
    if (r == 0) return absl::OutOfRangeError("spool read: file ends early");
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SpoolDir>> SpoolDir::Open(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("spool dir: empty path");
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return absl::ErrnoToStatus(errno, absl::StrCat("spool dir ", path));
    // EEXIST: someone created it meanwhile; the checks below still apply.
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, absl::StrCat("spool dir ", path, ": mkdir"));
    }
  } else if (S_ISLNK(st.st_mode)) {
    return Refuse(path, "is a symlink; give the real directory");
  }
  ScopedFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) {
    if (errno == ELOOP) return Refuse(path, "is a symlink; give the real directory");
    if (errno == ENOTDIR) return Refuse(path, "is not a directory");
    return absl::ErrnoToStatus(errno, absl::StrCat("spool dir ", path));
  }
  // fstat on the fd we will use, so the checks are about that directory.
  if (::fstat(dir.get(), &st) != 0) return absl::ErrnoToStatus(errno, path);
  if (st.st_uid != ::geteuid()) {
    return Refuse(path, absl::StrCat("owned by uid ", st.st_uid, ", not by us (uid ",
                                     ::geteuid(), ")"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Refuse(path, absl::StrFormat("mode %04o lets group or others write; use 0700",
                                        st.st_mode & 07777));
  }
  ScopedFd lock(::openat(dir.get(), "spool.lock",
                         O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock.valid()) return absl::ErrnoToStatus(errno, absl::StrCat(path, "/spool.lock"));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return Refuse(path, "in use by another process (spool.lock)");
    return absl::ErrnoToStatus(errno, absl::StrCat(path, "/spool.lock"));
  }
  return std::unique_ptr<SpoolDir>(new SpoolDir(path, std::move(dir), std::move(lock)));
}

std::string SpoolDir::SegmentName(uint64_t id) {
  return absl::StrFormat("spool-%016x.log", id);
}

absl::Status SpoolDir::Annotate(const absl::Status& s, absl::string_view name) const {
  return absl::Status(s.code(), absl::StrCat(s.message(), " ", path_, "/", name));
}

absl::Status SpoolDir::Error(int err, absl::string_view what, absl::string_view name) const {
  return absl::ErrnoToStatus(err, absl::StrCat("spool ", what, " ", path_, "/", name));
}

absl::StatusOr<std::vector<uint64_t>> SpoolDir::ListSegments() const {
  // fdopendir takes ownership of its fd; give it a duplicate of ours.
  int fd = ::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error(errno, "list", "");
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    ::close(fd);
    return Error(err, "list", "");
  }
  std::vector<uint64_t> ids;
  absl::Status status;
  while (struct dirent* e = ::readdir(d)) {
    std::optional<uint64_t> id = ParseSegmentName(e->d_name);
    if (!id) continue;
    struct stat st;
    if (::fstatat(dir_.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      status = Error(errno, "stat", e->d_name);
      break;
    }
    if (!S_ISREG(st.st_mode)) {
      status = Refuse(path_, absl::StrCat(e->d_name, " is not a regular file"));
      break;
    }
    ids.push_back(*id);
  }
  ::closedir(d);
  if (!status.ok()) return status;
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<ScopedFd> SpoolDir::CreateSegment(uint64_t id) const {
  const std::string name = SegmentName(id);
  ScopedFd fd(::openat(dir_.get(), name.c_str(),
                       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Error(errno, "create", name);
  return fd;
}

absl::StatusOr<ScopedFd> SpoolDir::OpenSegmentForRead(uint64_t id) const {
  const std::string name = SegmentName(id);
  ScopedFd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Error(errno, "open", name);
  return fd;
}

absl::Status SpoolDir::RemoveSegment(uint64_t id) const {
  const std::string name = SegmentName(id);
  if (::unlinkat(dir_.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    return Error(errno, "remove", name);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SpoolDir::ReadAll(int fd, absl::string_view name) const {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Error(errno, "stat", name);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  absl::Status s = PreadAll(fd, bytes.data(), bytes.size(), 0);
  if (!s.ok()) return Annotate(s, name);
  return bytes;
}

absl::StatusOr<std::optional<std::string>> SpoolDir::ReadSmallFile(absl::string_view name,
                                                                  uint64_t max_bytes) const {
  const std::string n(name);
  ScopedFd fd(::openat(dir_.get(), n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Error(errno, "open", name);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error(errno, "stat", name);
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::DataLossError(absl::StrCat("spool ", path_, "/", name,
                                            ": not a regular file or larger than ",
                                            max_bytes, " bytes"));
  }
  absl::StatusOr<std::string> bytes = ReadAll(fd.get(), name);
  if (!bytes.ok()) return bytes.status();
  return std::optional<std::string>(*std::move(bytes));
}

absl::Status SpoolDir::WriteFileAtomic(absl::string_view name, absl::string_view bytes,
                                       bool fsync) const {
  const std::string final_name(name);
  const std::string tmp = absl::StrCat(name, ".tmp");
  // O_TRUNC without O_EXCL: a .tmp left by a crash is simply overwritten.
  ScopedFd fd(::openat(dir_.get(), tmp.c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Error(errno, "create", tmp);
  if (absl::Status s = PwriteAll(fd.get(), bytes.data(), bytes.size(), 0); !s.ok()) {
    return Annotate(s, tmp);
  }
  if (fsync && ::fdatasync(fd.get()) != 0) return Error(errno, "fsync", tmp);
  fd.Reset();
  if (::renameat(dir_.get(), tmp.c_str(), dir_.get(), final_name.c_str()) != 0) {
    return Error(errno, "rename", tmp);
  }
  return fsync ? SyncDir() : absl::OkStatus();
}

absl::Status SpoolDir::SyncDir() const {
  if (::fsync(dir_.get()) != 0) return Error(errno, "fsync", "");
  return absl::OkStatus();
}

}  // namespace opmap::agent
