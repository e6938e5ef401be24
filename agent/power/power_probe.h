// What `opmap-agent power` measures: every GPU NVML sees and every RAPL zone, read at the
// start of a short window, every `interval` during it and at its end, then energy over the
// window with the power mode beside it. The same reads and the same EnergyOverWindow the
// capture windows use, so an operator sees on a host what the agent will report there.
#ifndef OPMAP_AGENT_POWER_POWER_PROBE_H_
#define OPMAP_AGENT_POWER_POWER_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/power/gpu_power.h"
#include "agent/power/nvml_api.h"
#include "agent/power/rapl.h"

namespace opmap::agent {

struct PowerProbeOptions {
  std::string nvml_library = kNvmlLibrary;
  std::string powercap_root = "/sys/class/powercap";
  absl::Duration duration = absl::Seconds(1);
  absl::Duration interval = absl::Milliseconds(100);
};

struct PowerProbe {
  absl::Duration duration;
  std::string gpu_unavailable;                // NVML could not be opened: why
  std::vector<std::vector<GpuState>> gpus;    // per GPU, the reads in time order
  std::string cpu_unavailable;                // RAPL could not be opened or read: why
  std::vector<RaplZone> zones;
  std::vector<uint64_t> zone_first_uj, zone_last_uj;
  int64_t zone_covered_ns = 0;
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
