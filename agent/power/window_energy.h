// Energy over a capture window from the reads taken during it. Pure: no NVML, no files.
//
// Preferred: the difference of NVML's energy counter between the first and last read
// ("energy_counter"). Otherwise the reads' board power integrated by the trapezoid rule
// ("integrated_power", labelled as such: NVML averages power over about a second, so short
// windows are smoothed). Never a figure from fewer than two reads.
#ifndef OPMAP_AGENT_POWER_WINDOW_ENERGY_H_
#define OPMAP_AGENT_POWER_WINDOW_ENERGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/power/gpu_power.h"

namespace opmap::agent {

struct WindowEnergy {
  double joules = 0;
  int64_t covered_ns = 0;      // last read - first read
  std::string method;          // "energy_counter" or "integrated_power"
  int reads = 0;               // reads the figure rests on
  // covered_ns > 0 in every WindowEnergy EnergyOverWindow returns.
  double average_watts() const { return joules * 1e9 / covered_ns; }
};

// `reads` of one GPU in time order. Unavailable with the reason (fewer than two reads,
// neither energy nor power readable, a clock that did not advance, a counter that went
// backwards: the driver was reloaded).
absl::StatusOr<WindowEnergy> EnergyOverWindow(const std::vector<GpuState>& reads);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_WINDOW_ENERGY_H_
