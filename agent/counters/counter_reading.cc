#include "agent/counters/counter_reading.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/stats/multiplex.h"

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
  std::optional<double> scaled = analysis::ScaleMultiplexed(
      reading.value, reading.time_enabled_ns, reading.time_running_ns);
  if (!scaled.has_value()) {
    return absl::UnavailableError(absl::StrCat(
        reading.name, ": counter never ran (time_running 0 ns of ", reading.time_enabled_ns,
        " ns enabled; multiplexed out or not yet scheduled)"));
  }
  return *scaled;
}

}  // namespace opmap::agent
