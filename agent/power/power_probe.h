// What `opmap-agent power` measures: every GPU NVML sees and every RAPL zone, read at the
// start of a short window, every `interval` during it and at its end, then energy over the
// window with the power mode beside it. The same reads and the same EnergyOverWindow the
// capture windows use, so an operator sees on a host what the agent will report there.
#ifndef OPMAP_AGENT_POWER_POWER_PROBE_H_
#define OPMAP_AGENT_POWER_POWER_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/power/gpu_power.h"
#include "agent/power/nvml_api.h"
#include "agent/power/rapl.h"
#include "agent/power/window_energy.h"

namespace opmap::agent {

struct PowerProbeOptions {
  std::string nvml_library = kNvmlLibrary;
  std::string powercap_root = "/sys/class/powercap";
  absl::Duration duration = absl::Seconds(1);
  absl::Duration interval = absl::Milliseconds(100);
};

// One GPU over the window: its last read (limit, clocks, mode) and the window's energy.
struct GpuProbe {
  GpuState last;
  absl::StatusOr<WindowEnergy> energy;
};

// One RAPL zone over the window; covered_ns > 0 (the window is never empty).
struct ZoneEnergy {
  RaplZone zone;
  double joules = 0;
  int64_t covered_ns = 0;
  double average_watts() const { return joules * 1e9 / covered_ns; }
};

struct PowerProbe {
  absl::Duration duration;
  std::string gpu_unavailable;  // NVML could not be opened: why
  std::vector<GpuProbe> gpus;
  std::string cpu_unavailable;  // RAPL could not be opened or read: why
  std::vector<ZoneEnergy> zones;
};

// Blocks for options.duration.
PowerProbe ProbePower(const PowerProbeOptions& options);

// Human text: one block per GPU, one line per RAPL zone, `unavailable: <reason>` for
// anything that could not be measured.
std::string PowerProbeText(const PowerProbe& probe);
// The same as one JSON object (a missing figure is null with "<field>_unavailable").
std::string PowerProbeJson(const PowerProbe& probe);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_POWER_PROBE_H_
