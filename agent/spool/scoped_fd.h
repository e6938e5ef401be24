// ScopedFd: owns one file descriptor and closes it once. The spool keeps every fd in one
// of these so that an early `return status` can never leak a descriptor.
#ifndef OPMAP_AGENT_SPOOL_SCOPED_FD_H_
#define OPMAP_AGENT_SPOOL_SCOPED_FD_H_

#include <unistd.h>

#include <utility>

namespace opmap::agent {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset() {
    // close() errors are not actionable here: data that must be durable was fsync'ed
    // (or deliberately not) before the descriptor is dropped.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_SCOPED_FD_H_
