// A log sink that lets a burst of lines through and then at most a steady rate, so a
// peer that makes the program log on every message (a forged batch, a message protobuf
// refuses) cannot fill the disk or drown the operator's lines. Lines over the limit are
// counted, and the next line let through says how many were left out.
#ifndef OPMAP_COMMON_LOG_RATE_LIMITED_LOG_H_
#define OPMAP_COMMON_LOG_RATE_LIMITED_LOG_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/synchronization/mutex.h"

namespace opmap::log {

struct RateLimit {
  int64_t burst = 100;        // lines let through back to back
  int64_t per_minute = 60;    // lines the allowance regains each minute
};

class RateLimitedLog {
 public:
  // `now_ns`: a monotonic clock (tests pass a fake one).
  RateLimitedLog(std::function<void(const std::string&)> sink, RateLimit limit,
                 std::function<int64_t()> now_ns);

  // Writes `line` to the sink, or counts it as suppressed. Thread-safe; the sink is
  // called under the lock, so lines never interleave.
  void Write(const std::string& line);

  int64_t suppressed_total() const;

 private:
  const std::function<void(const std::string&)> sink_;
  const RateLimit limit_;
  const std::function<int64_t()> now_ns_;
  mutable absl::Mutex mu_;
  double allowance_ ABSL_GUARDED_BY(mu_);
  int64_t last_ns_ ABSL_GUARDED_BY(mu_);
  int64_t suppressed_since_last_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t suppressed_total_ ABSL_GUARDED_BY(mu_) = 0;
};

// The process's one sink for lines a peer can cause: "<program>: <line>" on stderr, at
// most a burst of 100 then 60 a minute (RateLimit's defaults), on the steady clock.
// `program` is the first caller's; every daemon names itself once, at start.
void PeerLog(const char* program, const std::string& line);

}  // namespace opmap::log

#endif  // OPMAP_COMMON_LOG_RATE_LIMITED_LOG_H_
