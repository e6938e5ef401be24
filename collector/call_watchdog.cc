#include "collector/call_watchdog.h"

#include <grpcpp/server_context.h>

namespace opmap::collector {

CallWatchdog::CallWatchdog(std::atomic<int64_t>* counter, absl::Duration tick)
    : counter_(counter), tick_(tick), thread_([this] { Loop(); }) {}

CallWatchdog::~CallWatchdog() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

CallWatchdog::Arm::~Arm() {
  if (owner_ == nullptr) return;
  absl::MutexLock lock(&owner_->mu_);
  owner_->armed_.erase(id_);
}

CallWatchdog::Arm CallWatchdog::Watch(grpc::ServerContext* context, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  armed_[id] = Entry{context, absl::Now() + timeout};
  return Arm(this, id);
}

int64_t CallWatchdog::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

void CallWatchdog::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    mu_.AwaitWithTimeout(absl::Condition(&stop_), tick_);
    const absl::Time now = absl::Now();
    for (auto it = armed_.begin(); it != armed_.end();) {
      if (it->second.deadline <= now) {
        it->second.context->TryCancel();
        ++cancelled_;
        if (counter_ != nullptr) counter_->fetch_add(1, std::memory_order_relaxed);
        armed_.erase(it++);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace opmap::collector
