// One read of every NVML figure opmap keeps per GPU (energy, power, the enforced limit,
// clocks, throttle reasons, temperature, and the power mode: persistence, MIG, compute
// mode). A figure NVML cannot give is `unavailable` with NVML's own reason, never a zero.
#ifndef OPMAP_AGENT_POWER_GPU_POWER_H_
#define OPMAP_AGENT_POWER_GPU_POWER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/power/nvml_api.h"
#include "common/text/power_names.h"

namespace opmap::agent {

// A value or the reason there is none.
template <typename T>
struct Reading {
  std::optional<T> value;
  std::string unavailable;  // set when !value
};

struct GpuState {
  unsigned index = 0;
  std::string name;
  std::string uuid;                    // "GPU-..."; "" when NVML cannot say
  int64_t time_ns = 0;                 // the caller's clock when read
  Reading<uint64_t> energy_mj;         // since the driver loaded (Volta and later)
  Reading<uint32_t> power_mw;          // NVML's averaged board power
  Reading<uint32_t> power_limit_mw;    // enforced: the lowest of all limits in force
  Reading<uint32_t> sm_clock_mhz;
  Reading<uint32_t> mem_clock_mhz;
  Reading<uint64_t> throttle_reasons;  // OPMAP_NVML_THROTTLE_* bits
  Reading<uint32_t> temperature_c;
  Reading<bool> persistence;
  Reading<bool> mig;                   // current MIG mode
  Reading<int> compute_mode;           // OPMAP_NVML_COMPUTEMODE_*
};

// The names of throttle bits and compute modes: common/text/power_names.h.
using text::ComputeModeName;
using text::ThrottleReasonNames;

class GpuPowerReader {
 public:
  // nvmlInit_v2 and a handle per GPU. Unavailable with NVML's reason (no driver, no GPU).
  static absl::StatusOr<std::unique_ptr<GpuPowerReader>> Open(NvmlApi api);
  ~GpuPowerReader();  // nvmlShutdown
  GpuPowerReader(const GpuPowerReader&) = delete;
  GpuPowerReader& operator=(const GpuPowerReader&) = delete;

  size_t gpu_count() const { return devices_.size(); }
  const std::string& uuid(size_t gpu) const { return uuids_[gpu]; }  // "" if unknown
  GpuState Read(size_t gpu, int64_t now_ns) const;

 private:
  GpuPowerReader(NvmlApi api, std::vector<opmap_nvmlDevice_t> devices,
                 std::vector<std::string> names, std::vector<std::string> uuids);
  // A missing entry point or an error code as the reason text.
  template <typename T, typename Call>
  Reading<T> Get(bool has_entry_point, const char* entry_point, Call call) const;

  NvmlApi api_;
  std::vector<opmap_nvmlDevice_t> devices_;
  std::vector<std::string> names_;
  std::vector<std::string> uuids_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_GPU_POWER_H_
