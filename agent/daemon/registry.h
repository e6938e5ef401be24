// The registration socket: libraries connect, say hello and hand over their sealed ring.
// Each handshake runs on its own thread with a 1 s deadline (peer_threads.h), so a slow
// or hostile library never holds the supervisor; a finished registration waits until the
// supervisor takes it. Peer credentials come from the kernel (SO_PEERCRED), never from
// what the library writes.
#ifndef OPMAP_AGENT_DAEMON_REGISTRY_H_
#define OPMAP_AGENT_DAEMON_REGISTRY_H_

#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/daemon/peer_threads.h"

namespace opmap::agent {

struct RegisteredProcess;

class Registry {
 public:
  // At most this many handshakes at once; more are refused (and counted) at accept: the
  // library retries.
  static constexpr int kMaxHandshakes = 8;

  // Listens on `socket_path` (replacing a stale socket file); `host` goes into each
  // process's resource.
  static absl::StatusOr<std::unique_ptr<Registry>> Listen(const std::string& socket_path,
                                                          std::string host);
  ~Registry();  // joins the handshakes, closes and unlinks the socket

  int fd() const { return fd_; }  // poll it for POLLIN, then call Accept()

  // Accepts up to 8 waiting connections and starts their handshakes. Supervisor only.
  void Accept();
  // The registrations completed since the last call (after all in progress have ended,
  // when `wait`). Supervisor only.
  std::vector<std::unique_ptr<RegisteredProcess>> TakeReady(bool wait);

  int64_t refused_busy() const { return refused_busy_.load(); }
  // Connections refused because their uid is neither root nor the agent's.
  int64_t refused_foreign() const { return refused_foreign_.load(); }

 private:
  Registry(int fd, std::string socket_path, std::string host);
  // The blocking part of a registration (hello, ring fd, /proc facts); nullptr when the
  // peer was refused (logged).
  std::unique_ptr<RegisteredProcess> Handshake(int fd, ucred cred) const;

  const int fd_;
  const std::string socket_path_;
  const std::string host_;
  std::atomic<int64_t> refused_busy_{0};
  std::atomic<int64_t> refused_foreign_{0};
  static constexpr int kHandshakesPerTick = 8;
  static constexpr int kAcceptsPerTick = 4096;  // refusals included
  std::mutex ready_mu_;
  std::vector<std::unique_ptr<RegisteredProcess>> ready_;  // guarded by ready_mu_
  PeerThreads handshakes_{kMaxHandshakes};  // last: joined first, while the rest is alive
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_REGISTRY_H_
