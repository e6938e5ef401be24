#include "agent/transport/unix_socket.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace opmap::transport {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

int PollMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  if (left == absl::InfiniteDuration()) return -1;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

absl::StatusOr<int> ListenUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path '", path, "' is empty or longer than ",
                                                   sizeof(addr.sun_path) - 1, " bytes"));
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " exists and is not a socket: not replacing it"));
    }
    unlink(path.c_str());
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status s = Errno(absl::StrCat("bind ", path));
    close(fd);
    return s;
  }
  chmod(path.c_str(), 0666);  // anyone may connect; SO_PEERCRED decides who is served
  // The kernel caps the backlog at net.core.somaxconn: a flood of foreign connections
  // queued ahead of a workload is drained fast (Registry::Accept), not refused at connect.
  if (listen(fd, SOMAXCONN) != 0) {
    absl::Status s = Errno("listen");
    close(fd);
    unlink(path.c_str());
    return s;
  }
  return fd;
}

absl::StatusOr<Peer> AcceptPeer(int listen_fd, absl::Time deadline) {
  pollfd pfd{listen_fd, POLLIN, 0};
  int ready;
  do {
    ready = poll(&pfd, 1, PollMs(deadline));
  } while (ready < 0 && errno == EINTR);
  if (ready < 0) return Errno("poll");
  if (ready == 0) return absl::DeadlineExceededError("nobody connected");
  Peer peer;
  peer.fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (peer.fd < 0) return Errno("accept");
  socklen_t len = sizeof(peer.cred);
  if (getsockopt(peer.fd, SOL_SOCKET, SO_PEERCRED, &peer.cred, &len) != 0) {
    absl::Status s = Errno("SO_PEERCRED");
    close(peer.fd);
    return s;
  }
  if (peer.cred.uid != 0 && peer.cred.uid != geteuid()) {
    close(peer.fd);
    return absl::PermissionDeniedError(absl::StrCat("peer pid ", peer.cred.pid, " uid ",
                                                    peer.cred.uid, " is neither root nor uid ",
                                                    geteuid()));
  }
  return peer;
}

}  // namespace opmap::transport
