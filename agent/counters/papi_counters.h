// PapiCounters: PAPI hardware presets (PAPI_TOT_CYC, PAPI_MEM_SCY, ...) attached to one
// pid through PAPI's perf_event component, multiplexed when more presets are asked for
// than the PMU has counters.
//
// Opening never fails as a whole: each preset that can't be counted is appended to the
// caller's unavailable list with the reason PAPI gave (on a VM without a PMU that is the
// component's disabled reason and PAPI_query_event's error), and Open returns nullptr when
// no preset could be opened, so nothing is held for a process with no hardware counters.
//
// Scaling: PAPI's perf_event component reads time enabled/running itself and returns
// already-scaled estimates for multiplexed sets; it does not expose the two times. So a
// PAPI reading carries time_enabled_ns == time_running_ns == wall time since start, and
// Scaled() leaves it unchanged (scaling twice would be wrong). What PAPI returns for a
// multiplexed preset that never got a slot is PAPI's choice, and it gives us no way to
// tell that case apart; a fleet PMU check should confirm it before trusting tiny counts.
//
// Thread safety: thread-compatible. The event set is attached, so PAPI reads it through
// its own context, not the calling thread's; every call holds PapiMutex().
#ifndef OPMAP_AGENT_COUNTERS_PAPI_COUNTERS_H_
#define OPMAP_AGENT_COUNTERS_PAPI_COUNTERS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/counters/counter_reading.h"

namespace opmap::agent {

class PapiCounters {
 public:
  // `presets` are PAPI preset or native event names. Failures go to `unavailable`.
  static std::unique_ptr<PapiCounters> Open(pid_t pid, const std::vector<std::string>& presets,
                                            std::vector<CounterUnavailable>* unavailable);
  ~PapiCounters();
  PapiCounters(const PapiCounters&) = delete;
  PapiCounters& operator=(const PapiCounters&) = delete;

  // Appends one reading per open preset to `out`.
  absl::Status Read(std::vector<CounterReading>* out);

  bool multiplexed() const { return multiplexed_; }

 private:
  PapiCounters(pid_t pid, int event_set) : pid_(pid), event_set_(event_set) {}

  pid_t pid_;
  int event_set_;
  bool started_ = false;
  bool multiplexed_ = false;
  long long start_ns_ = 0;          // PAPI_get_real_nsec at PAPI_start
  std::vector<std::string> names_;  // in event-set order
  std::vector<long long> values_;   // scratch for PAPI_read, sized once
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_PAPI_COUNTERS_H_
