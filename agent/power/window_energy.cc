#include "agent/power/window_energy.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {

absl::StatusOr<WindowEnergy> EnergyOverWindow(const std::vector<GpuState>& reads) {
  if (reads.size() < 2) {
    return absl::UnavailableError(absl::StrCat("energy needs two reads, the window has ",
                                               reads.size()));
  }
  const GpuState& first = reads.front();
  const GpuState& last = reads.back();
  if (last.time_ns <= first.time_ns) {
    return absl::UnavailableError("the window's reads cover no time");
  }
  WindowEnergy energy;
  energy.covered_ns = last.time_ns - first.time_ns;
  if (first.energy_mj.value && last.energy_mj.value) {
    if (*last.energy_mj.value < *first.energy_mj.value) {
      return absl::UnavailableError(
          "the NVML energy counter went backwards (driver reloaded during the window)");
    }
    energy.joules = static_cast<double>(*last.energy_mj.value - *first.energy_mj.value) / 1e3;
    energy.method = "energy_counter";
    energy.reads = 2;
    return energy;
  }
  // Trapezoids between consecutive reads that both have power and advance the clock.
  double joules = 0;
  int64_t covered = 0;
  int used = 0;           // reads in the trapezoids
  size_t last_used = 0;   // the later read of the previous trapezoid (0: none yet)
  for (size_t i = 1; i < reads.size(); ++i) {
    const GpuState& a = reads[i - 1];
    const GpuState& b = reads[i];
    if (!a.power_mw.value || !b.power_mw.value || b.time_ns <= a.time_ns) continue;
    const double seconds = static_cast<double>(b.time_ns - a.time_ns) / 1e9;
    joules += (static_cast<double>(*a.power_mw.value) + *b.power_mw.value) / 2e3 * seconds;
    covered += b.time_ns - a.time_ns;
    used += last_used == i - 1 && used > 0 ? 1 : 2;  // a shared end counts once
    last_used = i;
  }
  if (used == 0) {
    return absl::UnavailableError(absl::StrCat(
        "neither energy nor power was readable: ",
        !last.energy_mj.unavailable.empty() ? last.energy_mj.unavailable : "energy missing", "; ",
        !last.power_mw.unavailable.empty() ? last.power_mw.unavailable : "power missing"));
  }
  energy.joules = joules;
  energy.covered_ns = covered;
  energy.method = "integrated_power";
  energy.reads = used;
  return energy;
}

}  // namespace opmap::agent
