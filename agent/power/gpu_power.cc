#include "agent/power/gpu_power.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace opmap::agent {

std::string ThrottleReasonNames(uint64_t bits) {
  if (bits == 0) return "none";
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {OPMAP_NVML_THROTTLE_GPU_IDLE, "gpu_idle"},
      {OPMAP_NVML_THROTTLE_APPLICATIONS_CLOCKS, "applications_clocks"},
      {OPMAP_NVML_THROTTLE_SW_POWER_CAP, "sw_power_cap"},
      {OPMAP_NVML_THROTTLE_HW_SLOWDOWN, "hw_slowdown"},
      {OPMAP_NVML_THROTTLE_SYNC_BOOST, "sync_boost"},
      {OPMAP_NVML_THROTTLE_SW_THERMAL, "sw_thermal"},
      {OPMAP_NVML_THROTTLE_HW_THERMAL, "hw_thermal"},
      {OPMAP_NVML_THROTTLE_HW_POWER_BRAKE, "hw_power_brake"},
      {OPMAP_NVML_THROTTLE_DISPLAY_CLOCKS, "display_clocks"}};
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (bits & bit) names.emplace_back(name);
  }
  if (bits & ~known) names.push_back(absl::StrFormat("0x%x", bits & ~known));
  return absl::StrJoin(names, ",");
}

std::string ComputeModeName(int mode) {
  switch (mode) {
    case OPMAP_NVML_COMPUTEMODE_DEFAULT: return "default";
    case OPMAP_NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "exclusive_thread";
    case OPMAP_NVML_COMPUTEMODE_PROHIBITED: return "prohibited";
    case OPMAP_NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "exclusive_process";
  }
  return absl::StrCat("mode ", mode);
}

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
    devices.push_back(device);
    names.emplace_back(name);
  }
  return std::unique_ptr<GpuPowerReader>(
      new GpuPowerReader(std::move(api), std::move(devices), std::move(names)));
}

GpuPowerReader::GpuPowerReader(NvmlApi api, std::vector<opmap_nvmlDevice_t> devices,
                               std::vector<std::string> names)
    : api_(std::move(api)), devices_(std::move(devices)), names_(std::move(names)) {}

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
