// The agent's control socket (`opmap-agent status`, `opmap attach`): one request line per
// connection (control_protocol.h), read with a 2 s deadline on a thread of its own, so a
// client that never finishes its line holds only that thread. An attach's answer (up to
// the memory budget of capture bytes) is written by a detached responder thread: a slow
// reader never stalls the supervisor. At most kMaxRequests are served at once; more are
// refused at accept.
#ifndef OPMAP_AGENT_DAEMON_CONTROL_SERVER_H_
#define OPMAP_AGENT_DAEMON_CONTROL_SERVER_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/daemon/attach_result.h"
#include "agent/daemon/peer_threads.h"

namespace opmap::agent {

// What a request asks of the agent. Both are called on a request thread.
struct ControlHandlers {
  std::function<std::string(bool json)> status;
  // Queues an attach; `done` runs once, on any thread, and must not call back into the
  // agent.
  std::function<void(pid_t pid, absl::Duration duration, bool stalls,
                     std::function<void(AttachResult)> done)>
      attach;
};

class ControlServer {
 public:
  static constexpr int kMaxRequests = 8;

  static absl::StatusOr<std::unique_ptr<ControlServer>> Listen(const std::string& socket_path,
                                                               ControlHandlers handlers);
  ~ControlServer();  // joins the request threads, closes and unlinks the socket

  int fd() const { return fd_; }  // poll it for POLLIN, then call Accept()
  void Accept();                   // one connection; supervisor thread only
  void Reap(bool wait) { requests_.Reap(wait); }

 private:
  ControlServer(int fd, std::string socket_path, ControlHandlers handlers);
  void Serve(int fd) const;

  const int fd_;
  const std::string socket_path_;
  const ControlHandlers handlers_;
  PeerThreads requests_{kMaxRequests};  // last: joined first
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_CONTROL_SERVER_H_
