// Taking a lock on the exit path without risking a hang: try_lock, polled every 100 µs
// until a deadline. (Not std::timed_mutex: its try_lock_for is pthread_mutex_clocklock,
// which ThreadSanitizer builds do not see, so every later report about it is noise.)
#ifndef OPMAP_AGENT_INJECT_BOUNDED_LOCK_H_
#define OPMAP_AGENT_INJECT_BOUNDED_LOCK_H_

#include <time.h>

#include <cstdint>
#include <mutex>

namespace opmap::inject {

inline bool LockWithin(std::mutex& mu, int64_t timeout_ns) {
  for (int64_t waited = 0;; waited += 100'000) {
    if (mu.try_lock()) return true;
    if (waited >= timeout_ns) return false;
    timespec ts{0, 100'000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_BOUNDED_LOCK_H_
