// A small bounded set of joinable threads, one per peer being served (a registration
// handshake, a control request). The supervisor starts and joins them and never waits on
// a peer: a peer that sends one byte and goes silent holds only its own thread, until
// its deadline, and past `max` threads new peers are refused at accept.
#ifndef OPMAP_AGENT_DAEMON_PEER_THREADS_H_
#define OPMAP_AGENT_DAEMON_PEER_THREADS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace opmap::agent {

class PeerThreads {
 public:
  explicit PeerThreads(int max) : max_(max) {}
  ~PeerThreads() { Reap(/*wait=*/true); }
  PeerThreads(const PeerThreads&) = delete;
  PeerThreads& operator=(const PeerThreads&) = delete;

  // Runs `serve` on a new thread; false (and `serve` is not run) when `max` are running.
  // Supervisor thread only.
  bool TryStart(std::function<void()> serve) {
    Reap(/*wait=*/false);
    if (static_cast<int>(threads_.size()) >= max_) return false;
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([serve = std::move(serve), done] {
                          serve();
                          done->store(true);
                        }),
                        done});
    return true;
  }

  // Joins the threads that have finished (every one when `wait`: each ends within its
  // peer's deadline). Supervisor thread only.
  void Reap(bool wait) {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (wait || it->done->load()) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }

  int max() const { return max_; }

 private:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  const int max_;
  std::vector<Entry> threads_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_PEER_THREADS_H_
