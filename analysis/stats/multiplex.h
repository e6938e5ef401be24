// Counter multiplexing (docs/metrics.md, "Counter scaling"): when more hardware counters
// are asked for than the PMU has, the kernel rotates them and each one counts only part of
// the time it was enabled. Its estimate over the whole enabled time is
//
//   scaled = value × time_enabled / time_running
//
// One function for the agent's window table, its counter readings and the collector's
// counter queries, so the three agree to the last bit.
#ifndef OPMAP_ANALYSIS_STATS_MULTIPLEX_H_
#define OPMAP_ANALYSIS_STATS_MULTIPLEX_H_

#include <cstdint>
#include <optional>

namespace opmap::analysis {

// nullopt when the counter never ran (time_running ≤ 0): its value is unknown, not 0.
// A counter that ran all the time it was enabled (software counters always do) is its
// value exactly. Otherwise the product is taken in long double: value × enabled
// overflows neither its range nor, for sums of many samples, its precision.
inline std::optional<double> ScaleMultiplexed(int64_t value, int64_t time_enabled_ns,
                                              int64_t time_running_ns) {
  if (time_running_ns <= 0) return std::nullopt;
  if (time_running_ns >= time_enabled_ns) return static_cast<double>(value);
  return static_cast<double>(static_cast<long double>(value) * time_enabled_ns /
                             time_running_ns);
}

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_STATS_MULTIPLEX_H_
