#include "agent/transport/control_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/transport/unix_socket.h"
#include "common/base/absl_view.h"

namespace opmap::transport {
namespace {

constexpr int kMaxFdsPerRead = 4;
constexpr absl::Duration kRestOfMessage = absl::Seconds(5);

// Reads exactly `n` bytes before `deadline`, collecting any fds that ride along (closed
// by the caller if it did not expect them). DeadlineExceeded, or Unavailable on EOF.
absl::Status ReadExact(int fd, void* buf, size_t n, absl::Time deadline, std::vector<int>* fds,
                       bool* truncated_fds) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, PollMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Errno("poll");
    if (ready == 0) return absl::DeadlineExceededError("control socket: message timed out");
    iovec iov{p, n};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerRead)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t got = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) return Errno("recvmsg");
    if (got == 0) return absl::UnavailableError("control socket: peer closed");
    if ((msg.msg_flags & MSG_CTRUNC) != 0) *truncated_fds = true;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->push_back(received);
      }
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

void CloseAll(const std::vector<int>& fds) {
  for (int f : fds) close(f);
}

// Reads one framed message; fds that arrive are returned in *fds.
absl::Status ReadFrame(int fd, absl::Time first_byte_deadline, ControlMessage* out,
                       std::vector<int>* fds, bool* truncated_fds) {
  ring::ControlHeader h{};
  // The header's first byte may take until `first_byte_deadline`; the rest of the message
  // must follow promptly.
  absl::Status s = ReadExact(fd, &h, 1, first_byte_deadline, fds, truncated_fds);
  if (!s.ok()) return s;
  // From here a timeout is not "no message" but a message cut short.
  auto cut_short = [](absl::Status st) {
    return absl::IsDeadlineExceeded(st)
               ? absl::UnavailableError("control socket: message cut short")
               : st;
  };
  const absl::Time rest = absl::Now() + kRestOfMessage;
  s = ReadExact(fd, reinterpret_cast<uint8_t*>(&h) + 1, sizeof(h) - 1, rest, fds, truncated_fds);
  if (!s.ok()) return cut_short(s);
  if (h.magic != ring::kControlMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat("control message: bad magic 0x", absl::Hex(h.magic)));
  }
  if (h.body_len > ring::kMaxControlBody) {
    return absl::InvalidArgumentError(absl::StrCat("control message: body of ", h.body_len,
                                                   " bytes exceeds ", ring::kMaxControlBody));
  }
  out->type = h.type;
  out->body.assign(h.body_len, '\0');
  if (h.body_len > 0) {
    s = ReadExact(fd, out->body.data(), h.body_len, rest, fds, truncated_fds);
  }
  return cut_short(s);
}

std::map<std::string, std::string> ParseMetadata(std::string_view text) {
  std::map<std::string, std::string> m;
  // absl's string_view is its own type in this Abseil build; split on it explicitly.
  for (absl::string_view line : absl::StrSplit(base::AbslView(text), '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos || eq == 0) continue;
    m[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return m;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ControlListener>> ControlListener::Listen(
    const std::string& path) {
  absl::StatusOr<int> fd = ListenUnix(path);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<ControlListener>(new ControlListener(*fd, path));
}

ControlListener::~ControlListener() {
  close(fd_);
  unlink(path_.c_str());
}

absl::StatusOr<std::unique_ptr<ControlChannel>> ControlListener::Accept(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<Peer> peer = AcceptPeer(fd_, deadline);
  if (!peer.ok()) {
    if (absl::IsDeadlineExceeded(peer.status())) {
      return absl::DeadlineExceededError("no library connected");
    }
    return peer.status();
  }
  return ControlChannel::FromAcceptedPeer(peer->fd, peer->cred, deadline - absl::Now());
}

absl::StatusOr<std::unique_ptr<ControlChannel>> ControlChannel::FromAcceptedPeer(
    int fd, const ucred& cred, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  ControlMessage m;
  std::vector<int> fds;
  bool truncated = false;
  absl::Status s = ReadFrame(fd, deadline, &m, &fds, &truncated);
  auto reject = [&](absl::Status why) {
    CloseAll(fds);
    close(fd);
    return why;
  };
  if (!s.ok()) return reject(s);
  if (m.type != ring::kHello) {
    return reject(absl::InvalidArgumentError(
        absl::StrCat("first message has type ", m.type, ", want kHello")));
  }
  Hello hello;
  hello.peer_pid = cred.pid;
  hello.peer_uid = cred.uid;
  if (m.body.size() < sizeof(hello.body)) {
    return reject(absl::InvalidArgumentError("hello body shorter than HelloBody"));
  }
  std::memcpy(&hello.body, m.body.data(), sizeof(hello.body));
  if (hello.body.metadata_len != m.body.size() - sizeof(hello.body)) {
    return reject(absl::InvalidArgumentError(
        absl::StrCat("hello metadata_len ", hello.body.metadata_len, " but ",
                     m.body.size() - sizeof(hello.body), " bytes follow")));
  }
  if (hello.body.version != ring::kVersion) {
    return reject(absl::FailedPreconditionError(absl::StrCat(
        "library speaks ring version ", hello.body.version, ", this agent ", ring::kVersion)));
  }
  if (truncated || fds.size() != 1) {
    return reject(absl::InvalidArgumentError(
        absl::StrCat("hello carried ", fds.size(), " fds", truncated ? " (truncated)" : "",
                     ", want exactly the ring's memfd")));
  }
  hello.metadata = ParseMetadata(std::string_view(m.body).substr(sizeof(hello.body)));
  std::unique_ptr<ControlChannel> channel(new ControlChannel(fd, fds[0], std::move(hello)));
  if (absl::Status w = channel->Send(ring::kWelcome, nullptr, 0); !w.ok()) return w;
  return channel;
}

ControlChannel::~ControlChannel() {
  close(fd_);
  if (ring_fd_ >= 0) close(ring_fd_);
}

int ControlChannel::TakeRingFd() {
  const int fd = ring_fd_;
  ring_fd_ = -1;
  return fd;
}

absl::Status ControlChannel::Send(uint16_t type, const void* body, size_t n) {
  ring::ControlHeader h{};
  h.magic = ring::kControlMagic;
  h.type = type;
  h.body_len = static_cast<uint32_t>(n);
  std::string frame(reinterpret_cast<const char*>(&h), sizeof(h));
  if (n > 0) frame.append(static_cast<const char*>(body), n);
  const char* p = frame.data();
  size_t left = frame.size();
  while (left > 0) {
    const ssize_t w = send(fd_, p, left, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Errno("control socket send");
    p += w;
    left -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status ControlChannel::StartWindow(uint64_t window_id, absl::Duration duration,
                                         uint32_t flags) {
  ring::StartWindowBody b{};
  b.window_id = window_id;
  b.duration_ns = duration == absl::InfiniteDuration() ? 0 : absl::ToInt64Nanoseconds(duration);
  b.flags = flags;
  return Send(ring::kStartWindow, &b, sizeof(b));
}

absl::Status ControlChannel::StopWindow(uint64_t window_id) {
  ring::StopWindowBody b{};
  b.window_id = window_id;
  return Send(ring::kStopWindow, &b, sizeof(b));
}

absl::Status ControlChannel::Detach() { return Send(ring::kDetach, nullptr, 0); }

absl::StatusOr<std::optional<ControlMessage>> ControlChannel::Read(absl::Duration timeout) {
  ControlMessage m;
  std::vector<int> fds;
  bool truncated = false;
  absl::Status s = ReadFrame(fd_, absl::Now() + timeout, &m, &fds, &truncated);
  CloseAll(fds);  // the library sends an fd only with its hello
  if (absl::IsDeadlineExceeded(s)) return std::optional<ControlMessage>();
  if (!s.ok()) return s;
  return std::optional<ControlMessage>(std::move(m));
}

absl::StatusOr<ring::WindowDoneBody> ControlChannel::ParseWindowDone(const ControlMessage& m) {
  ring::WindowDoneBody d{};
  if (m.type != ring::kWindowDone || m.body.size() < sizeof(d)) {
    return absl::InvalidArgumentError("not a kWindowDone message");
  }
  std::memcpy(&d, m.body.data(), sizeof(d));
  return d;
}

absl::StatusOr<ControlChannel::StatusUpdate> ControlChannel::ParseStatusUpdate(
    const ControlMessage& m) {
  ring::StatusUpdateBody b{};
  if (m.type != ring::kStatusUpdate || m.body.size() < sizeof(b)) {
    return absl::InvalidArgumentError("not a kStatusUpdate message");
  }
  std::memcpy(&b, m.body.data(), sizeof(b));
  if (b.message_len != m.body.size() - sizeof(b)) {
    return absl::InvalidArgumentError("kStatusUpdate message_len disagrees with its body");
  }
  StatusUpdate u;
  u.component = b.component;
  u.code = b.code;
  u.message = m.body.substr(sizeof(b));
  return u;
}

}  // namespace opmap::transport
