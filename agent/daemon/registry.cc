#include "agent/daemon/registry.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/capture/unix_socket.h"
#include "agent/daemon/registered_process.h"

namespace opmap::agent {

absl::StatusOr<std::unique_ptr<Registry>> Registry::Listen(const std::string& socket_path,
                                                           std::string host) {
  absl::StatusOr<int> fd = capture::ListenUnix(socket_path);
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
  // Bounded: a burst of registrations is accepted over a few ticks, not in one.
  for (int i = 0; i < 8; ++i) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return;
    absl::StatusOr<capture::Peer> peer = capture::AcceptPeer(fd_, absl::Now());
    if (!peer.ok()) {
      std::fprintf(stderr, "opmap-agent: registration refused: %s\n",
                   std::string(peer.status().message()).c_str());
      continue;
    }
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
      std::fprintf(stderr,
                   "opmap-agent: registration from pid %d refused: %d registrations already in "
                   "progress (the library retries)\n",
                   static_cast<int>(cred.pid), kMaxHandshakes);
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
  absl::StatusOr<std::unique_ptr<capture::ControlChannel>> channel =
      capture::ControlChannel::FromAcceptedPeer(fd, cred, absl::Seconds(1));
  if (!channel.ok()) {
    std::fprintf(stderr, "opmap-agent: registration from pid %d refused: %s\n",
                 static_cast<int>(cred.pid), std::string(channel.status().message()).c_str());
    return nullptr;
  }
  auto p = std::make_unique<RegisteredProcess>();
  p->pid = (*channel)->hello().peer_pid;
  absl::StatusOr<std::unique_ptr<capture::RingReader>> ring =
      capture::RingReader::AttachFd((*channel)->TakeRingFd());
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
