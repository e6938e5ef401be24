#include "agent/daemon/agent_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/transport/unix_socket.h"

namespace opmap::agent {

absl::StatusOr<AgentReply> CallAgent(const std::string& socket_path,
                                     const ControlRequest& request, absl::Duration timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", socket_path));
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return transport::Errno("socket");
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    // Only "nothing listens there" is Unavailable (the caller may then act as the agent);
    // anything else (EACCES, ...) is an error the user must see.
    const int err = errno;
    const std::string why = absl::StrCat(socket_path, ": ", std::strerror(err));
    close(fd);
    if (err == ENOENT || err == ECONNREFUSED) return absl::UnavailableError("no agent at " + why);
    return absl::PermissionDeniedError("cannot reach the agent at " + why);
  }
  const std::string line = FormatControlRequest(request);
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    // The agent took the connection and closed it: its peer-credential check refused us.
    absl::Status s = absl::PermissionDeniedError(absl::StrCat(
        "the agent at ", socket_path, " closed the connection (only root or the agent's uid ",
        "may use it): ", std::strerror(errno)));
    close(fd);
    return s;
  }
  const absl::Time deadline = absl::Now() + timeout;
  std::string all;
  char buf[1 << 16];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, transport::PollMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      close(fd);
      return absl::DeadlineExceededError(
          absl::StrCat("the agent did not answer within ", absl::FormatDuration(timeout)));
    }
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // A reset is the agent refusing us (peer credentials, or its connection limit):
      // an agent is there, so never "no agent" (the caller would then act as the agent).
      absl::Status s = errno == ECONNRESET || errno == EPIPE
                           ? absl::PermissionDeniedError(absl::StrCat(
                                 "the agent at ", socket_path, " reset the connection (only ",
                                 "root or the agent's uid may use it): ", std::strerror(errno)))
                           : transport::Errno("read from the agent");
      close(fd);
      return s;
    }
    if (n == 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const size_t nl = all.find('\n');
  if (nl == std::string::npos) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the agent at ", socket_path, " closed the connection without an answer (only root ",
        "or the agent's uid may use it)"));
  }
  AgentReply reply;
  reply.fields = ParseAnswer(std::string_view(all).substr(0, nl));
  reply.body = all.substr(nl + 1);
  return reply;
}

}  // namespace opmap::agent
