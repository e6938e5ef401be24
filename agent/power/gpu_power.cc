#include "agent/power/gpu_power.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace opmap::agent {

absl::StatusOr<std::unique_ptr<GpuPowerReader>> GpuPowerReader::Open(NvmlApi api) {
  if (opmap_nvmlReturn_t rc = api.nvmlInit_v2(); rc != OPMAP_NVML_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("nvmlInit: ", api.ErrorText(rc)));
  }
  unsigned count = 0;
  if (opmap_nvmlReturn_t rc = api.nvmlDeviceGetCount_v2(&count); rc != OPMAP_NVML_SUCCESS) {
    api.nvmlShutdown();
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetCount: ", api.ErrorText(rc)));
  }
  if (count == 0) {
    api.nvmlShutdown();
    return absl::UnavailableError("NVML sees no GPU");
  }
  // A host has at most a few dozen GPUs; a library claiming more is not believed.
  constexpr unsigned kMaxGpus = 256;
  if (count > kMaxGpus) count = kMaxGpus;
  std::vector<opmap_nvmlDevice_t> devices;
  std::vector<std::string> names;
  std::vector<std::string> uuids;
  for (unsigned i = 0; i < count; ++i) {
    opmap_nvmlDevice_t device = nullptr;
    if (opmap_nvmlReturn_t rc = api.nvmlDeviceGetHandleByIndex_v2(i, &device);
        rc != OPMAP_NVML_SUCCESS) {
      api.nvmlShutdown();
      return absl::UnavailableError(
          absl::StrCat("nvmlDeviceGetHandleByIndex(", i, "): ", api.ErrorText(rc)));
    }
    char name[96] = {};
    if (api.nvmlDeviceGetName(device, name, sizeof(name) - 1) != OPMAP_NVML_SUCCESS) name[0] = 0;
    name[sizeof(name) - 1] = 0;
    char uuid[96] = {};
    if (api.nvmlDeviceGetUUID == nullptr ||
        api.nvmlDeviceGetUUID(device, uuid, sizeof(uuid) - 1) != OPMAP_NVML_SUCCESS) {
      uuid[0] = 0;
    }
    uuid[sizeof(uuid) - 1] = 0;
    devices.push_back(device);
    names.emplace_back(name);
    uuids.emplace_back(uuid);
  }
  return std::unique_ptr<GpuPowerReader>(
      new GpuPowerReader(std::move(api), std::move(devices), std::move(names), std::move(uuids)));
}

GpuPowerReader::GpuPowerReader(NvmlApi api, std::vector<opmap_nvmlDevice_t> devices,
                               std::vector<std::string> names, std::vector<std::string> uuids)
    : api_(std::move(api)),
      devices_(std::move(devices)),
      names_(std::move(names)),
      uuids_(std::move(uuids)) {}

GpuPowerReader::~GpuPowerReader() { api_.nvmlShutdown(); }

template <typename T, typename Call>
Reading<T> GpuPowerReader::Get(bool has_entry_point, const char* entry_point, Call call) const {
  Reading<T> reading;
  if (!has_entry_point) {
    reading.unavailable = absl::StrCat(api_.path, " has no ", entry_point);
    return reading;
  }
  T value{};
  opmap_nvmlReturn_t rc = call(&value);
  if (rc == OPMAP_NVML_SUCCESS) {
    reading.value = value;
  } else {
    reading.unavailable = absl::StrCat(entry_point, ": ", api_.ErrorText(rc));
  }
  return reading;
}

GpuState GpuPowerReader::Read(size_t gpu, int64_t now_ns) const {
  GpuState state;
  const opmap_nvmlDevice_t device = devices_[gpu];
  state.index = static_cast<unsigned>(gpu);
  state.name = names_[gpu];
  state.uuid = uuids_[gpu];
  state.time_ns = now_ns;
  const NvmlApi& a = api_;
  state.energy_mj = Get<uint64_t>(
      a.nvmlDeviceGetTotalEnergyConsumption != nullptr, "nvmlDeviceGetTotalEnergyConsumption",
      [&](uint64_t* v) {
        unsigned long long mj = 0;
        opmap_nvmlReturn_t rc = a.nvmlDeviceGetTotalEnergyConsumption(device, &mj);
        *v = mj;
        return rc;
      });
  state.power_mw = Get<uint32_t>(a.nvmlDeviceGetPowerUsage != nullptr, "nvmlDeviceGetPowerUsage",
                                 [&](uint32_t* v) { return a.nvmlDeviceGetPowerUsage(device, v); });
  state.power_limit_mw = Get<uint32_t>(
      a.nvmlDeviceGetEnforcedPowerLimit != nullptr, "nvmlDeviceGetEnforcedPowerLimit",
      [&](uint32_t* v) { return a.nvmlDeviceGetEnforcedPowerLimit(device, v); });
  state.sm_clock_mhz = Get<uint32_t>(a.nvmlDeviceGetClockInfo != nullptr, "nvmlDeviceGetClockInfo",
                                     [&](uint32_t* v) {
                                       return a.nvmlDeviceGetClockInfo(device, OPMAP_NVML_CLOCK_SM,
                                                                       v);
                                     });
  state.mem_clock_mhz = Get<uint32_t>(
      a.nvmlDeviceGetClockInfo != nullptr, "nvmlDeviceGetClockInfo",
      [&](uint32_t* v) { return a.nvmlDeviceGetClockInfo(device, OPMAP_NVML_CLOCK_MEM, v); });
  state.throttle_reasons = Get<uint64_t>(
      a.nvmlDeviceGetCurrentClocksThrottleReasons != nullptr,
      "nvmlDeviceGetCurrentClocksThrottleReasons", [&](uint64_t* v) {
        unsigned long long bits = 0;
        opmap_nvmlReturn_t rc = a.nvmlDeviceGetCurrentClocksThrottleReasons(device, &bits);
        *v = bits;
        return rc;
      });
  state.temperature_c = Get<uint32_t>(
      a.nvmlDeviceGetTemperature != nullptr, "nvmlDeviceGetTemperature",
      [&](uint32_t* v) { return a.nvmlDeviceGetTemperature(device, OPMAP_NVML_TEMPERATURE_GPU, v); });
  state.persistence = Get<bool>(a.nvmlDeviceGetPersistenceMode != nullptr,
                                "nvmlDeviceGetPersistenceMode", [&](bool* v) {
                                  int mode = 0;
                                  opmap_nvmlReturn_t rc = a.nvmlDeviceGetPersistenceMode(device, &mode);
                                  *v = mode == OPMAP_NVML_FEATURE_ENABLED;
                                  return rc;
                                });
  state.mig = Get<bool>(a.nvmlDeviceGetMigMode != nullptr, "nvmlDeviceGetMigMode", [&](bool* v) {
    unsigned current = 0, pending = 0;
    opmap_nvmlReturn_t rc = a.nvmlDeviceGetMigMode(device, &current, &pending);
    *v = current == OPMAP_NVML_FEATURE_ENABLED;
    return rc;
  });
  state.compute_mode = Get<int>(a.nvmlDeviceGetComputeMode != nullptr, "nvmlDeviceGetComputeMode",
                                [&](int* v) { return a.nvmlDeviceGetComputeMode(device, v); });
  return state;
}

}  // namespace opmap::agent
