// A capture window's power rows (opmap::v1::PowerSample) from the periodic reads the
// agent's power monitor keeps. Pure: no NVML, no files, no clock.
//
// A window [start, end] uses the reads from the last one at or before `start` through the
// last one at or before `end`, so the span brackets the window's start and ends at most
// one read interval before its end; the row says which span it covers.
#ifndef OPMAP_AGENT_POWER_POWER_WINDOW_H_
#define OPMAP_AGENT_POWER_POWER_WINDOW_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agent/power/gpu_power.h"
#include "agent/power/rapl.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

// The indices [first, last) of `times` (ascending) that a window [start_ns, end_ns] uses.
struct ReadSpan {
  size_t first = 0;
  size_t last = 0;
};
ReadSpan WindowReads(std::span<const int64_t> times, int64_t start_ns, int64_t end_ns);

// One GPU's reads within a window (time order, non-empty) → its row: energy (counter,
// else integrated power, else unavailable with the reason), the power mode and clocks of
// the last read, throttle reasons OR-ed and the highest temperature over the reads.
opmap::v1::PowerSample GpuPowerRow(std::span<const GpuState> reads);

// One RAPL zone's reads (time_ns, energy_uj) within a window → its row (one wrap of the
// counter accounted per step). Fewer than two reads: energy unavailable, with the reason.
struct ZoneRead {
  int64_t time_ns = 0;
  uint64_t energy_uj = 0;
};
opmap::v1::PowerSample ZonePowerRow(const RaplZone& zone, std::span<const ZoneRead> reads);

// CUDA_VISIBLE_DEVICES as the process had it → the NVML indices of the GPUs it uses:
// `unset` = every GPU; entries are CUDA ordinals (read as NVML indices, which holds under
// CUDA_DEVICE_ORDER=PCI_BUS_ID) or UUID prefixes ("GPU-5d1c"); as CUDA does, the list
// ends at the first entry that names no GPU. MIG instances ("MIG-...") name their parent
// only by UUID, which NVML's device list does not give: such a process matches no GPU and
// the caller reports why.
std::vector<size_t> VisibleGpus(bool unset, const std::string& cuda_visible_devices,
                                std::span<const std::string> uuids);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_POWER_WINDOW_H_
