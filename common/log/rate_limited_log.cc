#include "common/log/rate_limited_log.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_format.h"

namespace opmap::log {

RateLimitedLog::RateLimitedLog(std::function<void(const std::string&)> sink, RateLimit limit,
                               std::function<int64_t()> now_ns)
    : sink_(std::move(sink)),
      limit_(limit),
      now_ns_(std::move(now_ns)),
      allowance_(static_cast<double>(std::max<int64_t>(limit.burst, 1))),
      last_ns_(now_ns_()) {}

void RateLimitedLog::Write(const std::string& line) {
  absl::MutexLock lock(&mu_);
  const int64_t now = now_ns_();
  const double burst = static_cast<double>(std::max<int64_t>(limit_.burst, 1));
  if (now > last_ns_) {
    // A token bucket: the allowance refills continuously, up to the burst.
    allowance_ = std::min(burst, allowance_ + static_cast<double>(now - last_ns_) * 1e-9 *
                                                  static_cast<double>(limit_.per_minute) / 60.0);
    last_ns_ = now;
  }
  if (allowance_ < 1.0) {
    ++suppressed_since_last_;
    ++suppressed_total_;
    return;
  }
  allowance_ -= 1.0;
  if (suppressed_since_last_ > 0) {
    sink_(absl::StrFormat("(%d log lines suppressed: more than %d a minute)",
                          suppressed_since_last_, limit_.per_minute));
    suppressed_since_last_ = 0;
  }
  sink_(line);
}

int64_t RateLimitedLog::suppressed_total() const {
  absl::MutexLock lock(&mu_);
  return suppressed_total_;
}

void PeerLog(const char* program, const std::string& line) {
  static const std::string* const name = new std::string(program);
  static RateLimitedLog* const limited = new RateLimitedLog(
      [](const std::string& l) { std::fprintf(stderr, "%s: %s\n", name->c_str(), l.c_str()); },
      RateLimit{}, [] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
      });
  limited->Write(line);
}

}  // namespace opmap::log
