// OPMAP_INIT_WAIT_MS support: the thread that loaded the library (inside the
// application's first NVTX call) may wait, bounded, until the agent has had its chance to
// open a first window, so a short process is captured from its first range. "Settled" =
// a window began, or there is no agent to wait for (connect or hello failed).
#ifndef OPMAP_AGENT_INJECT_FIRST_WINDOW_H_
#define OPMAP_AGENT_INJECT_FIRST_WINDOW_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace opmap::inject {

class FirstWindowLatch {
 public:
  void Settle() {
    std::lock_guard<std::mutex> lock(mu_);
    settled_ = true;
    cv_.notify_all();
  }
  void Wait(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return settled_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool settled_ = false;
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_FIRST_WINDOW_H_
