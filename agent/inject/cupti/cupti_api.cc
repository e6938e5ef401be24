#include "agent/inject/cupti/cupti_api.h"

#include <dlfcn.h>

#include <cstdio>

namespace opmap::inject {
namespace {

// The toolkit's copy, for hosts where the loader path does not name it (a venv's wheel,
// a toolkit outside ld.so.conf). Set by CMake from CUDA::cupti's location.
#ifndef OPMAP_CUPTI_FALLBACK_PATH
#define OPMAP_CUPTI_FALLBACK_PATH ""
#endif

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

}  // namespace

bool CuptiApi::has_pc_sampling() const {
  return cuptiPCSamplingEnable && cuptiPCSamplingDisable && cuptiPCSamplingStart &&
         cuptiPCSamplingStop && cuptiPCSamplingGetData && cuptiPCSamplingGetNumStallReasons &&
         cuptiPCSamplingGetStallReasons && cuptiPCSamplingSetConfigurationAttribute;
}

bool LoadCuptiApi(CuptiApi* api, std::string* reason) {
  if (api->loaded()) return true;
  // RTLD_LOCAL: CUPTI's symbols must not satisfy lookups of the host or of a framework
  // that loads its own libcupti (Kineto links it; the same soname then shares one copy).
  const char* candidates[] = {"libcupti.so.13", "libcupti.so", OPMAP_CUPTI_FALLBACK_PATH};
  std::string first_error;
  void* handle = nullptr;
  for (const char* path : candidates) {
    if (path[0] == '\0') continue;
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      api->path = path;
      break;
    }
    if (first_error.empty()) first_error = DlError();
  }
  if (handle == nullptr) {
    *reason = "libcupti.so.13 not found (" + first_error + ")";
    return false;
  }

#define OPMAP_REQUIRE(fn)                                                 \
  if (!Resolve(handle, #fn, &api->fn)) {                                  \
    *reason = api->path + " has no " #fn " (CUPTI older than CUDA 12?)";  \
    *api = CuptiApi{};                                                    \
    return false;                                                         \
  }
  OPMAP_REQUIRE(cuptiGetResultString)
  OPMAP_REQUIRE(cuptiGetVersion)
  OPMAP_REQUIRE(cuptiSubscribe)
  OPMAP_REQUIRE(cuptiUnsubscribe)
  OPMAP_REQUIRE(cuptiGetCallbackName)
  OPMAP_REQUIRE(cuptiActivityEnable)
  OPMAP_REQUIRE(cuptiActivityDisable)
  OPMAP_REQUIRE(cuptiActivityRegisterCallbacks)
  OPMAP_REQUIRE(cuptiActivityFlushAll)
  OPMAP_REQUIRE(cuptiActivityGetNextRecord)
  OPMAP_REQUIRE(cuptiActivityGetNumDroppedRecords)
  OPMAP_REQUIRE(cuptiFinalize)
#undef OPMAP_REQUIRE

  Resolve(handle, "cuptiPCSamplingEnable", &api->cuptiPCSamplingEnable);
  Resolve(handle, "cuptiPCSamplingDisable", &api->cuptiPCSamplingDisable);
  Resolve(handle, "cuptiPCSamplingStart", &api->cuptiPCSamplingStart);
  Resolve(handle, "cuptiPCSamplingStop", &api->cuptiPCSamplingStop);
  Resolve(handle, "cuptiPCSamplingGetData", &api->cuptiPCSamplingGetData);
  Resolve(handle, "cuptiPCSamplingGetNumStallReasons", &api->cuptiPCSamplingGetNumStallReasons);
  Resolve(handle, "cuptiPCSamplingGetStallReasons", &api->cuptiPCSamplingGetStallReasons);
  Resolve(handle, "cuptiPCSamplingSetConfigurationAttribute",
          &api->cuptiPCSamplingSetConfigurationAttribute);
  Resolve(handle, "cuptiEnableCallback", &api->cuptiEnableCallback);
  Resolve(handle, "cuptiGetGraphNodeId", &api->cuptiGetGraphNodeId);
  Resolve(handle, "cuptiGetGraphId", &api->cuptiGetGraphId);
  // Set last: loaded() means the whole required table is there.
  api->handle = handle;
  return true;
}

bool LoadDriverApi(DriverApi* api, std::string* reason) {
  if (api->loaded()) return true;
  // Under CUDA_INJECTION64_PATH or in any CUDA application the driver is already mapped;
  // this only takes another reference. RTLD_NOLOAD is not used: a process that has not
  // touched CUDA yet may still start a window (the first kernel comes later).
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    *reason = "no CUDA driver (" + DlError() + ")";  // dlerror names libcuda.so.1
    return false;
  }
  DriverApi d;
  bool ok = Resolve(handle, "cuInit", &d.cuInit) &&
            Resolve(handle, "cuGetErrorName", &d.cuGetErrorName) &&
            Resolve(handle, "cuDeviceGetCount", &d.cuDeviceGetCount) &&
            Resolve(handle, "cuDeviceGet", &d.cuDeviceGet) &&
            Resolve(handle, "cuDevicePrimaryCtxGetState", &d.cuDevicePrimaryCtxGetState) &&
            Resolve(handle, "cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain) &&
            Resolve(handle, "cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease) &&
            Resolve(handle, "cuCtxPushCurrent_v2", &d.cuCtxPushCurrent) &&
            Resolve(handle, "cuCtxPopCurrent_v2", &d.cuCtxPopCurrent);
  if (!ok) {
    *reason = "no CUDA driver (libcuda.so.1 lacks a driver API entry point)";
    return false;
  }
  // cuInit is idempotent and thread-safe; without a GPU it fails, and CUPTI's activity
  // API would then answer CUPTI_ERROR_UNKNOWN to everything (PLATFORM_NOTES).
  const CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    *reason = "no CUDA driver (cuInit: " + DriverResultString(d, r) + ")";
    return false;
  }
  d.handle = handle;
  *api = d;
  return true;
}

std::string CuptiResultString(const CuptiApi& api, CUptiResult result) {
  const char* s = nullptr;
  if (api.cuptiGetResultString != nullptr &&
      api.cuptiGetResultString(result, &s) == CUPTI_SUCCESS && s != nullptr) {
    return s;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

std::string CuptiFailure(const CuptiApi& api, const char* what, CUptiResult result) {
  return std::string(what) + ": " + CuptiResultString(api, result);
}

std::string DriverResultString(const DriverApi& api, CUresult result) {
  const char* s = nullptr;
  if (api.cuGetErrorName != nullptr && api.cuGetErrorName(result, &s) == CUDA_SUCCESS &&
      s != nullptr) {
    return s;
  }
  return "CUDA error " + std::to_string(static_cast<int>(result));
}

}  // namespace opmap::inject
