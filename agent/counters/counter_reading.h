// CounterReading: one cumulative CPU counter value for one monitored process, and the
// record of a counter that could not be opened (CounterUnavailable). These are the only
// types the rest of the agent sees from agent/counters/; where they came from (PAPI or a
// raw perf_event fd) is carried in `source` so every printed number can say so.
//
// Scaling: the kernel multiplexes counters when more are requested than the PMU has, and
// then counts each one only part of the time. `value` is what the counter counted while
// it ran; Scaled() extrapolates to the whole enabled time:
//
//   ASSIGN_OR_RETURN(double cycles, Scaled(reading));   // value * enabled / running
//
// A counter that never ran (time_running_ns == 0) has no estimate at all: Scaled returns
// Unavailable, never 0, because 0 would read as "the process did nothing".
#ifndef OPMAP_AGENT_COUNTERS_COUNTER_READING_H_
#define OPMAP_AGENT_COUNTERS_COUNTER_READING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace opmap::agent {

// Which interface produced a reading.
enum class CounterSource {
  kPapi,       // a PAPI preset (hardware PMU), e.g. PAPI_TOT_CYC
  kPerfEvent,  // a raw perf_event_open software counter, e.g. perf::TASK-CLOCK
};

std::string_view CounterSourceName(CounterSource source);  // "papi", "perf_event"

// Cumulative since the counter was opened (not since the process started).
struct CounterReading {
  std::string name;  // "PAPI_TOT_CYC", "perf::TASK-CLOCK", "perf::CONTEXT-SWITCHES:u", ...
  CounterSource source = CounterSource::kPerfEvent;
  int64_t value = 0;            // raw count while running; task-clock is in ns
  int64_t time_enabled_ns = 0;  // how long the counter was enabled
  int64_t time_running_ns = 0;  // how long it actually counted (<= enabled)
};

// A counter that was asked for and could not be opened, with the reason in the words of
// the layer that refused (PAPI's error string, the component's disabled reason, errno
// text plus perf_event_paranoid). Printed as "unavailable: <reason>" (docs/metrics.md).
struct CounterUnavailable {
  std::string what;    // the counter name, e.g. "PAPI_TOT_CYC"
  std::string reason;  // never empty
};

// value * time_enabled / time_running, computed in floating point (the product overflows
// int64 after ~9 s of cycles at 1 GHz). Unavailable when time_running_ns <= 0: the counter
// was multiplexed out for the whole interval, or never scheduled. Equal to `value` when
// the counter ran all the time it was enabled (software counters always do).
absl::StatusOr<double> Scaled(const CounterReading& reading);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_COUNTER_READING_H_
