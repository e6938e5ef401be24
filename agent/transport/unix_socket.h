// The Unix-socket plumbing both agent sockets share: the registration socket libraries
// connect to (control_channel.h) and the control socket `opmap attach` and
// `opmap-agent status` use. Who may connect is decided by SO_PEERCRED, never by file
// modes alone: root, or the uid this process runs as.
#ifndef OPMAP_AGENT_TRANSPORT_UNIX_SOCKET_H_
#define OPMAP_AGENT_TRANSPORT_UNIX_SOCKET_H_

#include <sys/socket.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::transport {

// Binds and listens on `path` (a stale socket there is replaced; any other kind of file
// is an error, never removed). The socket file is 0666: peer credentials decide.
absl::StatusOr<int> ListenUnix(const std::string& path);

struct Peer {
  int fd = -1;  // the accepted connection; the caller owns it
  ucred cred{};
};

// Waits until `deadline` for a connection and checks its credentials. DeadlineExceeded
// when nobody connected; PermissionDenied (connection closed) for any other uid.
absl::StatusOr<Peer> AcceptPeer(int listen_fd, absl::Time deadline);

// Milliseconds for poll() until `deadline`: 0 when past, -1 when infinite.
int PollMs(absl::Time deadline);

// Unavailable("what: strerror(errno)").
absl::Status Errno(const std::string& what);

}  // namespace opmap::transport

#endif  // OPMAP_AGENT_TRANSPORT_UNIX_SOCKET_H_
