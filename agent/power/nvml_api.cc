#include "agent/power/nvml_api.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {
namespace {

template <typename Fn>
void Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

std::string NvmlApi::ErrorText(opmap_nvmlReturn_t code) const {
  const char* text = nvmlErrorString != nullptr ? nvmlErrorString(code) : nullptr;
  return absl::StrCat(text != nullptr ? text : "NVML error", " (NVML ", code, ")");
}

absl::StatusOr<NvmlApi> LoadNvmlApi(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(error != nullptr ? error : absl::StrCat(library, ": not found"));
  }
  NvmlApi api;
  api.path = library;
  Resolve(handle, "nvmlInit_v2", &api.nvmlInit_v2);
  Resolve(handle, "nvmlShutdown", &api.nvmlShutdown);
  Resolve(handle, "nvmlErrorString", &api.nvmlErrorString);
  Resolve(handle, "nvmlDeviceGetCount_v2", &api.nvmlDeviceGetCount_v2);
  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &api.nvmlDeviceGetHandleByIndex_v2);
  Resolve(handle, "nvmlDeviceGetName", &api.nvmlDeviceGetName);
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", api.nvmlInit_v2 != nullptr},
      {"nvmlShutdown", api.nvmlShutdown != nullptr},
      {"nvmlErrorString", api.nvmlErrorString != nullptr},
      {"nvmlDeviceGetCount_v2", api.nvmlDeviceGetCount_v2 != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", api.nvmlDeviceGetHandleByIndex_v2 != nullptr},
      {"nvmlDeviceGetName", api.nvmlDeviceGetName != nullptr}};
  for (const auto& [name, found] : required) {
    if (!found) {
      // Left loaded: see the header (never dlclosed).
      return absl::UnavailableError(absl::StrCat(library, " has no ", name));
    }
  }
  Resolve(handle, "nvmlDeviceGetUUID", &api.nvmlDeviceGetUUID);
  Resolve(handle, "nvmlDeviceGetTotalEnergyConsumption", &api.nvmlDeviceGetTotalEnergyConsumption);
  Resolve(handle, "nvmlDeviceGetPowerUsage", &api.nvmlDeviceGetPowerUsage);
  Resolve(handle, "nvmlDeviceGetEnforcedPowerLimit", &api.nvmlDeviceGetEnforcedPowerLimit);
  Resolve(handle, "nvmlDeviceGetClockInfo", &api.nvmlDeviceGetClockInfo);
  Resolve(handle, "nvmlDeviceGetCurrentClocksThrottleReasons",
          &api.nvmlDeviceGetCurrentClocksThrottleReasons);
  Resolve(handle, "nvmlDeviceGetTemperature", &api.nvmlDeviceGetTemperature);
  Resolve(handle, "nvmlDeviceGetPersistenceMode", &api.nvmlDeviceGetPersistenceMode);
  Resolve(handle, "nvmlDeviceGetMigMode", &api.nvmlDeviceGetMigMode);
  Resolve(handle, "nvmlDeviceGetComputeMode", &api.nvmlDeviceGetComputeMode);
  return api;
}

}  // namespace opmap::agent
