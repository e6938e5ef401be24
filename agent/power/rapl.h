// CPU package and DRAM energy from the Linux powercap RAPL interface
// (/sys/class/powercap/intel-rapl:N[:M]/; AMD Zen exposes the same tree). Each zone's
// energy_uj counter wraps at max_energy_range_uj; differences account for one wrap, so a
// window must be shorter than one wrap period (minutes at full load). energy_uj is readable
// by root only on kernels since 5.10 (CVE-2020-8694): a non-root agent says so.
#ifndef OPMAP_AGENT_POWER_RAPL_H_
#define OPMAP_AGENT_POWER_RAPL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::agent {

struct RaplZone {
  std::string id;    // "intel-rapl:0", "intel-rapl:0:1"
  std::string name;  // the zone's own name: "package-0", "dram", "core", "psys"
  uint64_t max_energy_range_uj = 0;
};

// after - before, once around the counter when it wrapped.
uint64_t RaplDeltaUj(uint64_t before, uint64_t after, uint64_t max_energy_range_uj);

class RaplReader {
 public:
  // Finds the zones under `powercap_root` (the real one in production; a fixture tree in
  // tests: the root is the operator's, never a peer's). Unavailable when there is none
  // ("no RAPL zone under /sys/class/powercap"), or none whose energy is readable.
  static absl::StatusOr<RaplReader> Open(const std::string& powercap_root);

  const std::vector<RaplZone>& zones() const { return zones_; }
  // One reading per zone, in zones() order.
  absl::StatusOr<std::vector<uint64_t>> ReadEnergyUj() const;

 private:
  std::string root_;
  std::vector<RaplZone> zones_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_RAPL_H_
