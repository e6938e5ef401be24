// The part of NVML's C ABI opmap calls, declared here because the agent never includes
// nvml.h nor links libnvidia-ml: the library is dlopened (nvml_api.h), so one agent
// binary runs on hosts with and without a driver. The values are NVML's (stable since
// NVML 5; the energy counter needs Volta or later). The header is plain C so that the test
// NVML library (tests/power/) implements exactly these declarations.
#ifndef OPMAP_AGENT_POWER_NVML_ABI_H_
#define OPMAP_AGENT_POWER_NVML_ABI_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int opmap_nvmlReturn_t;
typedef struct opmap_nvmlDevice_st* opmap_nvmlDevice_t;

enum {
  OPMAP_NVML_SUCCESS = 0,
  OPMAP_NVML_ERROR_UNINITIALIZED = 1,
  OPMAP_NVML_ERROR_INVALID_ARGUMENT = 2,
  OPMAP_NVML_ERROR_NOT_SUPPORTED = 3,
  OPMAP_NVML_ERROR_NO_PERMISSION = 4,
  OPMAP_NVML_ERROR_DRIVER_NOT_LOADED = 9,
  OPMAP_NVML_ERROR_GPU_IS_LOST = 15,
};

// nvmlClockType_t, nvmlTemperatureSensors_t, nvmlEnableState_t, nvmlComputeMode_t.
enum { OPMAP_NVML_CLOCK_SM = 1, OPMAP_NVML_CLOCK_MEM = 2 };
enum { OPMAP_NVML_TEMPERATURE_GPU = 0 };
enum { OPMAP_NVML_FEATURE_DISABLED = 0, OPMAP_NVML_FEATURE_ENABLED = 1 };
enum {
  OPMAP_NVML_COMPUTEMODE_DEFAULT = 0,
  OPMAP_NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  OPMAP_NVML_COMPUTEMODE_PROHIBITED = 2,
  OPMAP_NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

// nvmlClocksThrottleReasons bits (nvmlDeviceGetCurrentClocksThrottleReasons).
#define OPMAP_NVML_THROTTLE_GPU_IDLE 0x1ULL
#define OPMAP_NVML_THROTTLE_APPLICATIONS_CLOCKS 0x2ULL
#define OPMAP_NVML_THROTTLE_SW_POWER_CAP 0x4ULL
#define OPMAP_NVML_THROTTLE_HW_SLOWDOWN 0x8ULL
#define OPMAP_NVML_THROTTLE_SYNC_BOOST 0x10ULL
#define OPMAP_NVML_THROTTLE_SW_THERMAL 0x20ULL
#define OPMAP_NVML_THROTTLE_HW_THERMAL 0x40ULL
#define OPMAP_NVML_THROTTLE_HW_POWER_BRAKE 0x80ULL
#define OPMAP_NVML_THROTTLE_DISPLAY_CLOCKS 0x100ULL

// The entry points, by the names libnvidia-ml.so.1 exports them under.
typedef opmap_nvmlReturn_t (*opmap_nvmlInit_v2_fn)(void);
typedef opmap_nvmlReturn_t (*opmap_nvmlShutdown_fn)(void);
typedef const char* (*opmap_nvmlErrorString_fn)(opmap_nvmlReturn_t);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetCount_v2_fn)(unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int,
                                                                       opmap_nvmlDevice_t*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetName_fn)(opmap_nvmlDevice_t, char*, unsigned int);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetUUID_fn)(opmap_nvmlDevice_t, char*, unsigned int);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetTotalEnergyConsumption_fn)(opmap_nvmlDevice_t,
                                                                             unsigned long long*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetPowerUsage_fn)(opmap_nvmlDevice_t, unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetEnforcedPowerLimit_fn)(opmap_nvmlDevice_t,
                                                                         unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetClockInfo_fn)(opmap_nvmlDevice_t, int,
                                                                unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetCurrentClocksThrottleReasons_fn)(
    opmap_nvmlDevice_t, unsigned long long*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetTemperature_fn)(opmap_nvmlDevice_t, int,
                                                                  unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetPersistenceMode_fn)(opmap_nvmlDevice_t, int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetMigMode_fn)(opmap_nvmlDevice_t, unsigned int*,
                                                              unsigned int*);
typedef opmap_nvmlReturn_t (*opmap_nvmlDeviceGetComputeMode_fn)(opmap_nvmlDevice_t, int*);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // OPMAP_AGENT_POWER_NVML_ABI_H_
