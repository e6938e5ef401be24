// The wall clock in nanoseconds since the Unix epoch: the time base of every window and
// counter sample the agent stamps (CLOCK_REALTIME, so hosts compare on the collector).
// And the calling thread's CPU time, for what a piece of work costs whatever else runs.
#ifndef OPMAP_COMMON_BASE_WALL_CLOCK_H_
#define OPMAP_COMMON_BASE_WALL_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace opmap::base {

inline int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): unaffected by time spent
// descheduled, so a cost measured on a shared machine does not swing with its load.
inline int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace opmap::base

#endif  // OPMAP_COMMON_BASE_WALL_CLOCK_H_
