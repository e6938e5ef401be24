// Whether the store may still be trusted. Set when an integrity check (at start,
// periodically, or a commit that met SQLITE_CORRUPT) found it damaged; from then on
// ingest answers UNAVAILABLE (agents keep their batches and resend after the repair)
// and queries DATA_LOSS, instead of storing into or answering from changed data.
#ifndef OPMAP_COLLECTOR_STORE_HEALTH_H_
#define OPMAP_COLLECTOR_STORE_HEALTH_H_

#include <atomic>
#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace opmap::collector {

class StoreHealth {
 public:
  // The first damage wins (its message is the one operators need).
  void MarkDamaged(const absl::Status& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (damaged_.load()) return;
    why_ = std::string(why.message());
    damaged_.store(true);
  }
  bool damaged() const { return damaged_.load(); }
  // OK, or `code` with "the store is damaged: <why>; <what stopped>".
  absl::Status Check(absl::StatusCode code, const char* what_stopped) const {
    if (!damaged_.load()) return absl::OkStatus();
    std::lock_guard<std::mutex> lock(mu_);
    return absl::Status(code, "the store is damaged: " + why_ + "; " + what_stopped);
  }

 private:
  std::atomic<bool> damaged_{false};
  mutable std::mutex mu_;
  std::string why_;  // guarded by mu_
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_HEALTH_H_
