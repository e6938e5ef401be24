#include "agent/counters/counter_reading.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {

std::string_view CounterSourceName(CounterSource source) {
  switch (source) {
    case CounterSource::kPapi:
      return "papi";
    case CounterSource::kPerfEvent:
      return "perf_event";
  }
  return "unknown";
}

absl::StatusOr<double> Scaled(const CounterReading& reading) {
  if (reading.time_running_ns <= 0) {
    return absl::UnavailableError(absl::StrCat(
        reading.name, ": counter never ran (time_running 0 ns of ", reading.time_enabled_ns,
        " ns enabled; multiplexed out or not yet scheduled)"));
  }
  if (reading.time_running_ns >= reading.time_enabled_ns) {
    // Ran the whole time; skip the division so exact counts stay exact.
    return static_cast<double>(reading.value);
  }
  return static_cast<double>(reading.value) *
         (static_cast<double>(reading.time_enabled_ns) /
          static_cast<double>(reading.time_running_ns));
}

}  // namespace opmap::agent
