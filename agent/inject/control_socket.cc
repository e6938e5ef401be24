#include "agent/inject/control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace opmap::inject {
namespace {

constexpr int kRestOfMessageMs = 5000;

// 1: ready (or hung up: the read that follows sees it), 0: timed out, -1: poll failed.
int Poll(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  while (true) {
    const int n = poll(&p, 1, timeout_ms);
    if (n > 0) return 1;
    if (n == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

bool WaitFor(int fd, short events, int timeout_ms) { return Poll(fd, events, timeout_ms) == 1; }

// Reads exactly `n` bytes, each wait bounded by `timeout_ms`. False on EOF, error or timeout.
bool ReadFull(int fd, void* buf, size_t n, int timeout_ms) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    if (!WaitFor(fd, POLLIN, timeout_ms)) return false;
    const ssize_t got = recv(fd, p, n, MSG_DONTWAIT);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

int ConnectUnix(const std::string& path, int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return -1;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  // Non-blocking connect: a Unix socket whose backlog is full would otherwise block us.
  // A full backlog answers EAGAIN at once (nothing is in progress): tried again every
  // 5 ms within the timeout, since a local flood of other users' connections can fill
  // the agent's queue for moments at a time, and a registration must still get in.
  int err = 0;
  for (int waited_ms = 0;; waited_ms += 5) {
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      err = 0;
      break;
    }
    err = errno;
    if (err == EAGAIN && waited_ms < timeout_ms) {
      Poll(-1, 0, 5);  // a 5 ms sleep that needs no other call
      continue;
    }
    if (err == EINPROGRESS) {
      socklen_t len = sizeof(err);
      if (!WaitFor(fd, POLLOUT, timeout_ms) ||
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = ETIMEDOUT;
      }
    }
    if (err == EAGAIN) err = ETIMEDOUT;
    break;
  }
  if (err != 0) {
    close(fd);
    return -1;
  }
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

bool SendMessage(int fd, uint16_t type, const void* body, size_t body_len, const void* extra,
                 size_t extra_len, int pass_fd, bool dont_wait) {
  if (body_len + extra_len > ring::kMaxControlBody) return false;
  ring::ControlHeader h{};
  h.magic = ring::kControlMagic;
  h.type = type;
  h.body_len = static_cast<uint32_t>(body_len + extra_len);
  iovec iov[3] = {{&h, sizeof(h)},
                  {const_cast<void*>(body), body_len},
                  {const_cast<void*>(extra), extra_len}};
  int iov_count = 3;
  iovec* next = iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  bool fd_pending = pass_fd >= 0;
  const int flags = MSG_NOSIGNAL | (dont_wait ? MSG_DONTWAIT : 0);
  while (iov_count > 0) {
    msghdr msg{};
    msg.msg_iov = next;
    msg.msg_iovlen = static_cast<size_t>(iov_count);
    if (fd_pending) {  // the fd goes with the first bytes
      std::memset(control, 0, sizeof(control));
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t sent = sendmsg(fd, &msg, flags);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    fd_pending = false;
    while (iov_count > 0 && static_cast<size_t>(sent) >= next->iov_len) {
      sent -= static_cast<ssize_t>(next->iov_len);
      ++next;
      --iov_count;
    }
    if (iov_count > 0) {
      next->iov_base = static_cast<uint8_t*>(next->iov_base) + sent;
      next->iov_len -= static_cast<size_t>(sent);
    }
  }
  return true;
}

ReadResult ReadMessage(int fd, int timeout_ms, ring::ControlHeader* header, std::string* body) {
  const int ready = Poll(fd, POLLIN, timeout_ms);
  if (ready == 0) return ReadResult::kTimeout;
  if (ready < 0) return ReadResult::kClosed;
  if (!ReadFull(fd, header, sizeof(*header), kRestOfMessageMs)) return ReadResult::kClosed;
  if (header->magic != ring::kControlMagic || header->body_len > ring::kMaxControlBody) {
    return ReadResult::kClosed;
  }
  body->resize(header->body_len);
  if (header->body_len > 0 && !ReadFull(fd, body->data(), header->body_len, kRestOfMessageMs)) {
    return ReadResult::kClosed;
  }
  return ReadResult::kMessage;
}

}  // namespace opmap::inject
