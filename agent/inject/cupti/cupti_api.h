// The CUPTI and CUDA-driver functions CuptiCapture uses, resolved at run time with
// dlopen/dlsym. Nothing here is linked against libcupti or libcuda: the injected library
// must load (and its host process run) on machines that have neither.
//
// The CUPTI headers are included for types, enums and struct layouts only; every call goes
// through a pointer in CuptiApi / DriverApi. Library handles are never dlclosed: CUDA 13
// segfaults at exit when libcupti is unloaded without cuptiFinalize, and unloading the
// driver under a running CUDA application is never safe.
//
// Thread safety: Load* run on the control thread; a loaded table is immutable and may be
// read from any thread.
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_API_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_API_H_

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <string>

namespace opmap::inject {

// decltype of a declared (never defined here) function gives its exact pointer type, so a
// header change in a later CUDA shows up as a compile error, not a bad call.
#define OPMAP_CUPTI_FN(name) decltype(&::name) name = nullptr

struct CuptiApi {
  void* handle = nullptr;
  std::string path;  // what dlopen accepted (for messages)

  // Required: Load fails without any of these.
  OPMAP_CUPTI_FN(cuptiGetResultString);
  OPMAP_CUPTI_FN(cuptiGetVersion);
  OPMAP_CUPTI_FN(cuptiSubscribe);
  OPMAP_CUPTI_FN(cuptiUnsubscribe);
  OPMAP_CUPTI_FN(cuptiGetCallbackName);
  OPMAP_CUPTI_FN(cuptiActivityEnable);
  OPMAP_CUPTI_FN(cuptiActivityDisable);
  OPMAP_CUPTI_FN(cuptiActivityRegisterCallbacks);
  OPMAP_CUPTI_FN(cuptiActivityFlushAll);
  OPMAP_CUPTI_FN(cuptiActivityGetNextRecord);
  OPMAP_CUPTI_FN(cuptiActivityGetNumDroppedRecords);
  OPMAP_CUPTI_FN(cuptiFinalize);

  // Optional (PC sampling, CUDA 11.3+): a missing one only makes PC sampling unavailable.
  OPMAP_CUPTI_FN(cuptiPCSamplingEnable);
  OPMAP_CUPTI_FN(cuptiPCSamplingDisable);
  OPMAP_CUPTI_FN(cuptiPCSamplingStart);
  OPMAP_CUPTI_FN(cuptiPCSamplingStop);
  OPMAP_CUPTI_FN(cuptiPCSamplingGetData);
  OPMAP_CUPTI_FN(cuptiPCSamplingGetNumStallReasons);
  OPMAP_CUPTI_FN(cuptiPCSamplingGetStallReasons);
  OPMAP_CUPTI_FN(cuptiPCSamplingSetConfigurationAttribute);

  // Optional (CUDA 11.x+): a missing one only makes graph node recording unavailable.
  OPMAP_CUPTI_FN(cuptiEnableCallback);
  OPMAP_CUPTI_FN(cuptiGetGraphNodeId);
  OPMAP_CUPTI_FN(cuptiGetGraphId);

  bool loaded() const { return handle != nullptr; }
  bool has_pc_sampling() const;
};

struct DriverApi {
  void* handle = nullptr;
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxGetState)(CUdevice, unsigned int*, int*) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;  // the _v2 symbol
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;           // the _v2 symbol
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;           // the _v2 symbol

  bool loaded() const { return handle != nullptr; }
};

#undef OPMAP_CUPTI_FN

// dlopens libcupti ("libcupti.so.13", "libcupti.so", then the toolkit path this library was
// built against) and resolves the table. False with `*reason` (e.g. "libcupti.so.13 not
// found (...)") when the library or a required symbol is missing. Idempotent.
bool LoadCuptiApi(CuptiApi* api, std::string* reason);

// dlopens libcuda.so.1 and runs cuInit(0). False with `*reason` = "no CUDA driver (...)"
// when there is no driver or it does not initialize (no GPU). Idempotent once it succeeded.
bool LoadDriverApi(DriverApi* api, std::string* reason);

// "CUPTI_ERROR_UNKNOWN" and the like; the number when CUPTI has no string for it.
std::string CuptiResultString(const CuptiApi& api, CUptiResult result);

// "<what>: <CUPTI error string>", the form every failure reason takes.
std::string CuptiFailure(const CuptiApi& api, const char* what, CUptiResult result);

// "CUDA_ERROR_NO_DEVICE" and the like.
std::string DriverResultString(const DriverApi& api, CUresult result);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_API_H_
