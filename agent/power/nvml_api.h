// NVML resolved at run time: dlopen + dlsym into a table of pointers, never linked, so the
// agent starts (and says why power is unavailable) on hosts without an NVIDIA driver.
// The handle is never dlclosed: NVML keeps driver state that outlives nvmlShutdown.
#ifndef OPMAP_AGENT_POWER_NVML_API_H_
#define OPMAP_AGENT_POWER_NVML_API_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/power/nvml_abi.h"

namespace opmap::agent {

struct NvmlApi {
  std::string path;  // what dlopen accepted (for messages)

  // Required: loading fails without any of these.
  opmap_nvmlInit_v2_fn nvmlInit_v2 = nullptr;
  opmap_nvmlShutdown_fn nvmlShutdown = nullptr;
  opmap_nvmlErrorString_fn nvmlErrorString = nullptr;
  opmap_nvmlDeviceGetCount_v2_fn nvmlDeviceGetCount_v2 = nullptr;
  opmap_nvmlDeviceGetHandleByIndex_v2_fn nvmlDeviceGetHandleByIndex_v2 = nullptr;
  opmap_nvmlDeviceGetName_fn nvmlDeviceGetName = nullptr;

  // Optional: a missing one makes only its figure unavailable (older drivers lack some).
  opmap_nvmlDeviceGetUUID_fn nvmlDeviceGetUUID = nullptr;
  opmap_nvmlDeviceGetTotalEnergyConsumption_fn nvmlDeviceGetTotalEnergyConsumption = nullptr;
  opmap_nvmlDeviceGetPowerUsage_fn nvmlDeviceGetPowerUsage = nullptr;
  opmap_nvmlDeviceGetEnforcedPowerLimit_fn nvmlDeviceGetEnforcedPowerLimit = nullptr;
  opmap_nvmlDeviceGetClockInfo_fn nvmlDeviceGetClockInfo = nullptr;
  opmap_nvmlDeviceGetCurrentClocksThrottleReasons_fn nvmlDeviceGetCurrentClocksThrottleReasons =
      nullptr;
  opmap_nvmlDeviceGetTemperature_fn nvmlDeviceGetTemperature = nullptr;
  opmap_nvmlDeviceGetPersistenceMode_fn nvmlDeviceGetPersistenceMode = nullptr;
  opmap_nvmlDeviceGetMigMode_fn nvmlDeviceGetMigMode = nullptr;
  opmap_nvmlDeviceGetComputeMode_fn nvmlDeviceGetComputeMode = nullptr;

  // "NVML_ERROR_NOT_SUPPORTED"-like text from the library itself, with the code.
  std::string ErrorText(opmap_nvmlReturn_t code) const;
};

// The default library name, looked up on the loader's path as the driver installs it.
inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// dlopens `library` (an operator's flag or kNvmlLibrary; never a path a peer sent) and
// resolves the table. Unavailable with the loader's reason, e.g. "libnvidia-ml.so.1: cannot
// open shared object file: No such file or directory", or the missing required symbol.
absl::StatusOr<NvmlApi> LoadNvmlApi(const std::string& library);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_POWER_NVML_API_H_
