/* A test NVML: the entry points of agent/power/nvml_abi.h, answering from a script, so the
 * agent's real code path (dlopen, dlsym, the calls, the errors) runs without a GPU.
 *
 * $OPMAP_FAKE_NVML_SCRIPT names a file of lines:
 *   init ERROR_CODE                     nvmlInit_v2 fails with that code
 *   gpu KEY=VALUE ...                   one GPU per line, in index order
 * keys: name (underscores read as spaces), uuid, energy_mj, energy_step_mj (added per energy
 * read: a counter that advances), energy_rate_mw (the counter also advances by this power
 * over CLOCK_MONOTONIC time since nvmlInit: a GPU drawing a steady load), power_mw, power_step_mw, limit_mw, sm_mhz, mem_mhz,
 * throttle, temp_c, persistence, mig, compute. A key that is absent makes its entry point
 * answer NVML_ERROR_NOT_SUPPORTED, as a real driver does on an older GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/power/nvml_abi.h"

#define MAX_GPUS 8
enum { K_ENERGY, K_ENERGY_STEP, K_ENERGY_RATE, K_POWER, K_POWER_STEP, K_LIMIT, K_SM, K_MEM, K_THROTTLE,
       K_TEMP, K_PERSISTENCE, K_MIG, K_COMPUTE, K_COUNT };
static const char* const kKeys[K_COUNT] = {"energy_mj", "energy_step_mj",
                                           "energy_rate_mw", "power_mw",
                                           "power_step_mw", "limit_mw", "sm_mhz", "mem_mhz",
                                           "throttle", "temp_c", "persistence", "mig",
                                           "compute"};

struct opmap_nvmlDevice_st {
  char name[64];
  char uuid[64];
  int has[K_COUNT];
  unsigned long long value[K_COUNT];
  unsigned long long energy_reads, power_reads;
};

static struct opmap_nvmlDevice_st g_gpus[MAX_GPUS];
static unsigned g_count = 0;
static int g_init_error = 0;
static int g_initialized = 0;
static double g_init_s = 0;

static double monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load_script(void) {
  const char* path = getenv("OPMAP_FAKE_NVML_SCRIPT");
  memset(g_gpus, 0, sizeof(g_gpus));
  g_count = 0;
  g_init_error = 0;
  if (path == NULL) return;
  FILE* f = fopen(path, "r");
  if (f == NULL) return;
  char line[1024];
  while (fgets(line, sizeof(line), f) != NULL) {
    char* save = NULL;
    char* word = strtok_r(line, " \t\r\n", &save);
    if (word == NULL) continue;
    if (strcmp(word, "init") == 0) {
      char* code = strtok_r(NULL, " \t\r\n", &save);
      g_init_error = code != NULL ? atoi(code) : 0;
      continue;
    }
    if (strcmp(word, "gpu") != 0 || g_count == MAX_GPUS) continue;
    struct opmap_nvmlDevice_st* gpu = &g_gpus[g_count++];
    while ((word = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
      char* eq = strchr(word, '=');
      if (eq == NULL) continue;
      *eq = 0;
      const char* value = eq + 1;
      if (strcmp(word, "uuid") == 0) {
        snprintf(gpu->uuid, sizeof(gpu->uuid), "%s", value);
        continue;
      }
      if (strcmp(word, "name") == 0) {
        snprintf(gpu->name, sizeof(gpu->name), "%s", value);
        for (char* c = gpu->name; *c; ++c) if (*c == '_') *c = ' ';
        continue;
      }
      for (int k = 0; k < K_COUNT; ++k) {
        if (strcmp(word, kKeys[k]) == 0) {
          gpu->has[k] = 1;
          gpu->value[k] = strtoull(value, NULL, 0);
        }
      }
    }
  }
  fclose(f);
}

#define EXPORT __attribute__((visibility("default")))

EXPORT opmap_nvmlReturn_t nvmlInit_v2(void) {
  load_script();
  if (g_init_error != 0) return g_init_error;
  g_initialized = 1;
  g_init_s = monotonic_s();
  return OPMAP_NVML_SUCCESS;
}

EXPORT opmap_nvmlReturn_t nvmlShutdown(void) {
  if (!g_initialized) return OPMAP_NVML_ERROR_UNINITIALIZED;
  g_initialized = 0;
  return OPMAP_NVML_SUCCESS;
}

EXPORT const char* nvmlErrorString(opmap_nvmlReturn_t code) {
  switch (code) {
    case OPMAP_NVML_SUCCESS: return "Success";
    case OPMAP_NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case OPMAP_NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case OPMAP_NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!g_initialized) return OPMAP_NVML_ERROR_UNINITIALIZED;
  *count = g_count;
  return OPMAP_NVML_SUCCESS;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                         opmap_nvmlDevice_t* device) {
  if (!g_initialized) return OPMAP_NVML_ERROR_UNINITIALIZED;
  if (index >= g_count) return OPMAP_NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_gpus[index];
  return OPMAP_NVML_SUCCESS;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetName(opmap_nvmlDevice_t device, char* name,
                                             unsigned int length) {
  if (length == 0) return OPMAP_NVML_ERROR_INVALID_ARGUMENT;
  snprintf(name, length, "%s", device->name);
  return OPMAP_NVML_SUCCESS;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetUUID(opmap_nvmlDevice_t device, char* uuid,
                                             unsigned int length) {
  if (length == 0) return OPMAP_NVML_ERROR_INVALID_ARGUMENT;
  if (device->uuid[0] == 0) return OPMAP_NVML_ERROR_NOT_SUPPORTED;
  snprintf(uuid, length, "%s", device->uuid);
  return OPMAP_NVML_SUCCESS;
}

static opmap_nvmlReturn_t get(opmap_nvmlDevice_t device, int key, unsigned long long* out) {
  if (!g_initialized) return OPMAP_NVML_ERROR_UNINITIALIZED;
  if (!device->has[key]) return OPMAP_NVML_ERROR_NOT_SUPPORTED;
  *out = device->value[key];
  return OPMAP_NVML_SUCCESS;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(opmap_nvmlDevice_t device,
                                                               unsigned long long* mj) {
  opmap_nvmlReturn_t rc = get(device, K_ENERGY, mj);
  if (rc == OPMAP_NVML_SUCCESS) {
    *mj += device->energy_reads++ * device->value[K_ENERGY_STEP];
    if (device->has[K_ENERGY_RATE]) {
      /* mW × s = mJ */
      *mj += (unsigned long long)((monotonic_s() - g_init_s) * (double)device->value[K_ENERGY_RATE]);
    }
  }
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetPowerUsage(opmap_nvmlDevice_t device, unsigned int* mw) {
  unsigned long long v = 0;
  opmap_nvmlReturn_t rc = get(device, K_POWER, &v);
  if (rc == OPMAP_NVML_SUCCESS) *mw = (unsigned)(v + device->power_reads++ * device->value[K_POWER_STEP]);
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(opmap_nvmlDevice_t device,
                                                           unsigned int* mw) {
  unsigned long long v = 0;
  opmap_nvmlReturn_t rc = get(device, K_LIMIT, &v);
  if (rc == OPMAP_NVML_SUCCESS) *mw = (unsigned)v;
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetClockInfo(opmap_nvmlDevice_t device, int type,
                                                  unsigned int* mhz) {
  unsigned long long v = 0;
  int key = type == OPMAP_NVML_CLOCK_SM ? K_SM : type == OPMAP_NVML_CLOCK_MEM ? K_MEM : -1;
  if (key < 0) return OPMAP_NVML_ERROR_INVALID_ARGUMENT;
  opmap_nvmlReturn_t rc = get(device, key, &v);
  if (rc == OPMAP_NVML_SUCCESS) *mhz = (unsigned)v;
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(opmap_nvmlDevice_t device,
                                                                     unsigned long long* bits) {
  return get(device, K_THROTTLE, bits);
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetTemperature(opmap_nvmlDevice_t device, int sensor,
                                                    unsigned int* celsius) {
  unsigned long long v = 0;
  if (sensor != OPMAP_NVML_TEMPERATURE_GPU) return OPMAP_NVML_ERROR_INVALID_ARGUMENT;
  opmap_nvmlReturn_t rc = get(device, K_TEMP, &v);
  if (rc == OPMAP_NVML_SUCCESS) *celsius = (unsigned)v;
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetPersistenceMode(opmap_nvmlDevice_t device, int* mode) {
  unsigned long long v = 0;
  opmap_nvmlReturn_t rc = get(device, K_PERSISTENCE, &v);
  if (rc == OPMAP_NVML_SUCCESS) *mode = (int)v;
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetMigMode(opmap_nvmlDevice_t device, unsigned int* current,
                                                unsigned int* pending) {
  unsigned long long v = 0;
  opmap_nvmlReturn_t rc = get(device, K_MIG, &v);
  if (rc == OPMAP_NVML_SUCCESS) *current = *pending = (unsigned)v;
  return rc;
}

EXPORT opmap_nvmlReturn_t nvmlDeviceGetComputeMode(opmap_nvmlDevice_t device, int* mode) {
  unsigned long long v = 0;
  opmap_nvmlReturn_t rc = get(device, K_COMPUTE, &v);
  if (rc == OPMAP_NVML_SUCCESS) *mode = (int)v;
  return rc;
}
