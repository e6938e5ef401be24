#include "agent/daemon/control_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/transport/unix_socket.h"
#include "agent/daemon/control_protocol.h"
#include "common/log/rate_limited_log.h"

namespace opmap::agent {
namespace {

constexpr absl::Duration kRequestReadTimeout = absl::Seconds(2);

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One request line, bounded in size and time.
absl::StatusOr<std::string> ReadRequestLine(int fd) {
  const absl::Time deadline = absl::Now() + kRequestReadTimeout;
  std::string line;
  char c;
  while (line.size() < kMaxControlLine) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, transport::PollMs(deadline)) <= 0) {
      return absl::DeadlineExceededError("no complete request line within 2 s");
    }
    const ssize_t n = read(fd, &c, 1);
    if (n <= 0) return absl::InvalidArgumentError("connection closed before a request line");
    if (c == '\n') return line;
    line.push_back(c);
  }
  return absl::InvalidArgumentError("request line over 4096 bytes");
}

// The answer to an attach: the header fields, the counters table, then the capture bytes.
void AnswerAttach(int fd, AttachResult r) {
  std::map<std::string, std::string> fields = {{"outcome", r.outcome},
                                               {"pid", absl::StrCat(r.pid)}};
  if (r.outcome == "captured") {
    fields["window_ms"] = absl::StrCat(absl::ToInt64Milliseconds(r.window));
    fields["records"] = absl::StrCat(r.records);
    fields["drops"] = absl::StrCat(r.drops);
    fields["counters_len"] = absl::StrCat(r.counters.size());
  }
  std::string head = FormatAnswer(fields, r.message);
  if (r.outcome == "captured") head += r.counters;
  // Detached: it owns everything it touches (fd and bytes), nothing of the agent's.
  std::thread([fd, head = std::move(head), bytes = std::move(r.capture)] {
    if (WriteAll(fd, head)) WriteAll(fd, bytes);
    close(fd);
  }).detach();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Listen(
    const std::string& socket_path, ControlHandlers handlers) {
  absl::StatusOr<int> fd = transport::ListenUnix(socket_path);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<ControlServer>(
      new ControlServer(*fd, socket_path, std::move(handlers)));
}

ControlServer::ControlServer(int fd, std::string socket_path, ControlHandlers handlers)
    : fd_(fd), socket_path_(std::move(socket_path)), handlers_(std::move(handlers)) {}

ControlServer::~ControlServer() {
  requests_.Reap(/*wait=*/true);
  close(fd_);
  unlink(socket_path_.c_str());
}

void ControlServer::Accept() {
  absl::StatusOr<transport::Peer> peer = transport::AcceptPeer(fd_, absl::Now());
  if (!peer.ok()) {
    log::PeerLog("opmap-agent", absl::StrCat("control connection refused: ", peer.status().message()));
    return;
  }
  const int fd = peer->fd;
  if (!requests_.TryStart([this, fd] { Serve(fd); })) {
    log::PeerLog("opmap-agent", absl::StrFormat("control connection from pid %d refused: %d "
                                                "requests already in progress",
                                                static_cast<int>(peer->cred.pid), kMaxRequests));
    close(fd);
  }
}

void ControlServer::Serve(int fd) const {
  auto answer_and_close = [fd](const std::string& text) {
    WriteAll(fd, text);
    close(fd);
  };
  absl::StatusOr<std::string> line = ReadRequestLine(fd);
  absl::StatusOr<ControlRequest> request =
      line.ok() ? ParseControlRequest(*line) : absl::StatusOr<ControlRequest>(line.status());
  if (!request.ok()) {
    answer_and_close(FormatAnswer({{"outcome", "error"}}, std::string(request.status().message())));
    return;
  }
  if (request->kind == ControlRequest::Kind::kStatus) {
    answer_and_close(FormatAnswer({{"outcome", "status"}}, "") + handlers_.status(request->json));
    return;
  }
  handlers_.attach(static_cast<pid_t>(request->pid), request->duration, request->stalls,
                   [fd](AttachResult r) { AnswerAttach(fd, std::move(r)); });
}

}  // namespace opmap::agent
