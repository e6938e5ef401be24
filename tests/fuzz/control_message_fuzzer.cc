// libFuzzer target for the messages the agent reads from other processes:
//   mode 0: the registration socket (agent/transport/control_channel.h). The input's bytes
//           arrive on a socketpair, with 0-3 descriptors attached (SCM_RIGHTS) to the
//           first byte; ControlChannel::FromAcceptedPeer reads and checks the hello, then
//           Read() takes the messages after it (ParseWindowDone / ParseStatusUpdate).
//   mode 1: a control request line (agent/daemon/control_protocol.h ParseControlRequest),
//           whose FormatControlRequest must parse back to the same request.
//   mode 2: an answer line (ParseAnswer), whose fields must survive FormatAnswer.
// Input: mode byte (value % 3), for mode 0 one byte whose low 2 bits are the number of
// descriptors, then the bytes.
// Invariants: errors say why; no descriptor leaks (an agent that leaks one per bad
// hello runs out of them).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "agent/transport/control_channel.h"
#include "agent/daemon/control_protocol.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;
using fuzz::CheckErrorSaysWhy;
using fuzz::Fail;

// Sends `bytes` (as much as the socket buffer takes) with `nfds` descriptors attached.
void SendWithFds(int sock, std::string_view bytes, int nfds) {
  int fds[3];
  for (int i = 0; i < nfds; ++i) {
    fds[i] = memfd_create("opmap-fuzz-hello", MFD_CLOEXEC);
    if (fds[i] < 0) Fail("memfd_create");
  }
  size_t sent = 0;
  if (!bytes.empty()) {
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(fds))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds > 0) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    const ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) sent = static_cast<size_t>(n);
  }
  for (int i = 0; i < nfds; ++i) close(fds[i]);  // the receiver holds its own copies
  while (sent < bytes.size()) {
    const ssize_t n = send(sock, bytes.data() + sent, bytes.size() - sent,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;  // buffer full: the rest is not sent (inputs are capped below it)
    sent += static_cast<size_t>(n);
  }
  shutdown(sock, SHUT_WR);
}

void Registration(fuzz::Reader& in) {
  const int nfds = in.U8() & 3;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Fail("socketpair");
  SendWithFds(sv[0], in.Rest(), nfds);
  const ucred cred{getpid(), getuid(), getgid()};
  absl::StatusOr<std::unique_ptr<transport::ControlChannel>> channel =
      transport::ControlChannel::FromAcceptedPeer(sv[1], cred, absl::Seconds(1));
  if (!channel.ok()) {
    CheckErrorSaysWhy(channel.status(), "FromAcceptedPeer");
    close(sv[0]);
    return;
  }
  transport::ControlChannel& c = **channel;
  Check(c.hello().body.version == ring::kVersion, "an accepted hello has our version");
  for (const auto& [k, v] : c.hello().metadata) {
    Check(!k.empty() && k.find('\n') == std::string::npos && v.find('\n') == std::string::npos,
          "metadata keys and values are single lines");
  }
  const int ring_fd = c.TakeRingFd();
  Check(ring_fd >= 0 && c.TakeRingFd() == -1, "the hello's ring fd is taken once");
  close(ring_fd);
  (void)c.StartWindow(1, absl::Seconds(2), ring::kCaptureNvtx);
  for (int i = 0; i < 16; ++i) {
    absl::StatusOr<std::optional<transport::ControlMessage>> m = c.Read(absl::ZeroDuration());
    if (!m.ok()) {
      CheckErrorSaysWhy(m.status(), "ControlChannel::Read");
      break;
    }
    if (!m->has_value()) break;
    const transport::ControlMessage& msg = **m;
    Check(msg.body.size() <= ring::kMaxControlBody, "a message body within kMaxControlBody");
    CheckErrorSaysWhy(transport::ControlChannel::ParseWindowDone(msg).status(), "ParseWindowDone");
    absl::StatusOr<transport::ControlChannel::StatusUpdate> u =
        transport::ControlChannel::ParseStatusUpdate(msg);
    if (u.ok()) Check(u->message.size() + sizeof(ring::StatusUpdateBody) == msg.body.size(),
                      "status update message length");
  }
  (void)c.StopWindow(1);
  (void)c.Detach();
  close(sv[0]);
}

void Request(std::string_view line) {
  absl::StatusOr<agent::ControlRequest> r = agent::ParseControlRequest(line);
  if (!r.ok()) {
    CheckErrorSaysWhy(r.status(), "ParseControlRequest");
    return;
  }
  const std::string formatted = agent::FormatControlRequest(*r);
  absl::StatusOr<agent::ControlRequest> again = agent::ParseControlRequest(formatted);
  if (!again.ok()) Fail("a formatted request does not parse", formatted);
  Check(again->kind == r->kind && again->json == r->json && again->pid == r->pid &&
            again->duration == r->duration && again->stalls == r->stalls,
        "request round trip", formatted);
}

void Answer(std::string_view line) {
  std::map<std::string, std::string> fields = agent::ParseAnswer(line);
  std::string message;
  if (auto it = fields.find("message"); it != fields.end()) {
    message = it->second;
    fields.erase(it);
  }
  std::string formatted = agent::FormatAnswer(fields, message);
  Check(!formatted.empty() && formatted.back() == '\n', "an answer is one terminated line");
  formatted.pop_back();
  std::map<std::string, std::string> again = agent::ParseAnswer(formatted);
  Check(again.count("message") == 1, "a formatted answer has its message");
  again.erase("message");
  Check(again == fields, "answer fields round trip", formatted);
}

int ProbeFd() {
  const int fd = dup(2);
  close(fd);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // stays under the socket buffer: no reader thread needed
  // The lowest free descriptor before and after: one this call leaked takes that slot.
  const int first_free_fd = ProbeFd();
  fuzz::Reader in(data, size);
  switch (in.U8() % 3) {
    case 0: Registration(in); break;
    case 1: Request(in.Rest()); break;
    case 2: Answer(in.Rest()); break;
  }
  Check(ProbeFd() <= first_free_fd, "a descriptor leaked");
  return 0;
}
