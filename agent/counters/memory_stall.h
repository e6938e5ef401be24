// The CPU memory-stall fraction of docs/metrics.md ("CPU operators"): cycles stalled on
// memory / total cycles, from PAPI presets.
//
//   PAPI_MEM_SCY / PAPI_TOT_CYC   preferred: cycles stalled waiting for memory accesses
//   PAPI_RES_STL / PAPI_TOT_CYC   fallback, an upper bound: stalls on *any* resource
//
// Both counters are taken through Scaled(), since on a multiplexed PMU each ran for a
// different part of the interval. Without a PMU (any VM here) the presets are absent and
// the result is Unavailable with the reason the counter was not opened.
//
//   absl::StatusOr<MemoryStallFraction> f =
//       CpuMemoryStallFraction(readings, counters->unavailable());
//   if (!f.ok()) Print("unavailable: ", f.status().message());
#ifndef OPMAP_AGENT_COUNTERS_MEMORY_STALL_H_
#define OPMAP_AGENT_COUNTERS_MEMORY_STALL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/counters/counter_reading.h"

namespace opmap::agent {

// A bare double would lose which definition was used, and docs/metrics.md requires saying so.
struct MemoryStallFraction {
  double fraction = 0;    // in [0, 1]
  std::string numerator;  // "PAPI_MEM_SCY" or "PAPI_RES_STL"
  bool upper_bound = false;  // true for PAPI_RES_STL
};

// `readings` are cumulative (or deltas of two Reads with the same counters); only
// kPapi readings are used. `unavailable` (optional) supplies the reason a missing
// counter was not opened. Unavailable when PAPI_TOT_CYC or both numerators are missing,
// never ran, or no cycles were counted.
absl::StatusOr<MemoryStallFraction> CpuMemoryStallFraction(
    const std::vector<CounterReading>& readings,
    const std::vector<CounterUnavailable>& unavailable = {});

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_MEMORY_STALL_H_
