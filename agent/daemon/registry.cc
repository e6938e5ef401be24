#include "agent/daemon/registry.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/transport/unix_socket.h"
#include "agent/daemon/registered_process.h"
#include "common/log/rate_limited_log.h"
#include "agent/counters/process_counters.h"

namespace opmap::agent {

absl::StatusOr<std::unique_ptr<Registry>> Registry::Listen(const std::string& socket_path,
                                                           std::string host) {
  absl::StatusOr<int> fd = transport::ListenUnix(socket_path);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<Registry>(new Registry(*fd, socket_path, std::move(host)));
}

Registry::Registry(int fd, std::string socket_path, std::string host)
    : fd_(fd), socket_path_(std::move(socket_path)), host_(std::move(host)) {}

Registry::~Registry() {
  handshakes_.Reap(/*wait=*/true);
  close(fd_);
  unlink(socket_path_.c_str());
}

void Registry::Accept() {
  // Bounded: a burst of registrations is handed to handshakes over a few ticks, not in
  // one. Peers refused on their uid cost an accept and a close each and do not count:
  // the queue is drained of them, so a local flood of foreign connections cannot keep a
  // served workload waiting behind it (bounded per tick all the same).
  int handshakes = 0;
  for (int attempts = 0; handshakes < kHandshakesPerTick && attempts < kAcceptsPerTick;
       ++attempts) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return;
    absl::StatusOr<transport::Peer> peer = transport::AcceptPeer(fd_, absl::Now());
    if (!peer.ok()) {
      if (peer.status().code() == absl::StatusCode::kPermissionDenied) ++refused_foreign_;
      log::PeerLog("opmap-agent", absl::StrCat("registration refused: ", peer.status().message()));
      continue;
    }
    ++handshakes;
    const int fd = peer->fd;
    const ucred cred = peer->cred;
    const bool started = handshakes_.TryStart([this, fd, cred] {
      std::unique_ptr<RegisteredProcess> p = Handshake(fd, cred);
      if (p == nullptr) return;
      std::lock_guard<std::mutex> lock(ready_mu_);
      ready_.push_back(std::move(p));
    });
    if (!started) {
      ++refused_busy_;
      log::PeerLog("opmap-agent",
                   absl::StrFormat("registration from pid %d refused: %d registrations already "
                                   "in progress (the library retries)",
                                   static_cast<int>(cred.pid), kMaxHandshakes));
      close(fd);
    }
  }
}

std::vector<std::unique_ptr<RegisteredProcess>> Registry::TakeReady(bool wait) {
  handshakes_.Reap(wait);
  std::vector<std::unique_ptr<RegisteredProcess>> ready;
  std::lock_guard<std::mutex> lock(ready_mu_);
  ready.swap(ready_);
  return ready;
}

std::unique_ptr<RegisteredProcess> Registry::Handshake(int fd, ucred cred) const {
  // The peer is connected: its pid is this process. Held now, before anything is read.
  const ProcessIdentity identity = TakeProcessIdentity(cred.pid);
  ScopedFd held(identity.pidfd);
  absl::StatusOr<std::unique_ptr<transport::ControlChannel>> channel =
      transport::ControlChannel::FromAcceptedPeer(fd, cred, absl::Seconds(1));
  if (!channel.ok()) {
    log::PeerLog("opmap-agent", absl::StrFormat("registration from pid %d refused: %s",
                                                static_cast<int>(cred.pid),
                                                channel.status().message()));
    return nullptr;
  }
  auto p = std::make_unique<RegisteredProcess>();
  p->pid = (*channel)->hello().peer_pid;
  p->pidfd = std::move(held);
  p->start_time = identity.start_time;
  absl::StatusOr<std::unique_ptr<transport::RingReader>> ring =
      transport::RingReader::AttachFd((*channel)->TakeRingFd());
  if (!ring.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d: ring refused: %s\n", static_cast<int>(p->pid),
                 std::string(ring.status().message()).c_str());
    (void)(*channel)->Detach();
    return nullptr;
  }
  absl::StatusOr<ProcFacts> facts = ReadProcFacts(p->pid);
  if (facts.ok()) p->facts = *facts;
  for (const auto& [k, v] : (*channel)->hello().metadata) {
    absl::StrAppend(&p->metadata_text, k, "=", v, "\n");
  }
  p->resource = BuildResource(host_, p->pid, p->facts, (*channel)->hello().metadata);
  if (auto it = (*channel)->hello().metadata.find("cuda_visible_devices");
      it != (*channel)->hello().metadata.end()) {
    p->gpus = GpuSelection{false, it->second};
  }
  p->channel = std::move(*channel);
  p->ring = std::move(*ring);
  return p;
}

}  // namespace opmap::agent
