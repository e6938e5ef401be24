#include "agent/counters/papi_library.h"

#include <papi.h>
#include <pthread.h>

#include "absl/base/const_init.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {
namespace {

ABSL_CONST_INIT absl::Mutex papi_mutex(absl::kConstInit);

// PAPI_thread_init wants a function returning a unique id per thread.
unsigned long PapiThreadId() { return static_cast<unsigned long>(pthread_self()); }

absl::Status InitPapiLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(papi_mutex) {
  int version = PAPI_library_init(PAPI_VER_CURRENT);
  if (version != PAPI_VER_CURRENT) {
    if (version > 0) {
      return absl::UnavailableError(absl::StrCat(
          "PAPI_library_init: library version ", version, " differs from header version ",
          PAPI_VER_CURRENT));
    }
    return absl::UnavailableError(
        absl::StrCat("PAPI_library_init: ", PapiErrorText(version)));
  }
  // The agent reads counters from its scheduler threads, so PAPI must know threads exist.
  if (int rc = PAPI_thread_init(&PapiThreadId); rc != PAPI_OK) {
    return absl::UnavailableError(absl::StrCat("PAPI_thread_init: ", PapiErrorText(rc)));
  }
  // Needed before any PAPI_set_multiplex; cheap when multiplexing is never used.
  if (int rc = PAPI_multiplex_init(); rc != PAPI_OK) {
    return absl::UnavailableError(absl::StrCat("PAPI_multiplex_init: ", PapiErrorText(rc)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Mutex& PapiMutex() { return papi_mutex; }

absl::Status InitPapi() {
  // A function-local static is initialized exactly once even under concurrent first
  // calls; the lock keeps init apart from PAPI calls other threads may already be making.
  static const absl::Status* const status = [] {
    absl::MutexLock lock(&papi_mutex);
    return new absl::Status(InitPapiLocked());
  }();
  return *status;
}

std::string PapiErrorText(int code) {
  const char* text = PAPI_strerror(code);
  return absl::StrCat(text != nullptr ? text : "unknown error", " (PAPI error ", code, ")");
}

absl::StatusOr<int> PapiCpuComponent() {
  int cidx = PAPI_get_component_index("perf_event");
  if (cidx < 0) {
    return absl::UnavailableError(
        absl::StrCat("PAPI has no perf_event component: ", PapiErrorText(cidx)));
  }
  const PAPI_component_info_t* info = PAPI_get_component_info(cidx);
  if (info == nullptr) {
    return absl::UnavailableError("PAPI_get_component_info(perf_event) returned nothing");
  }
  if (info->disabled != 0) {
    return absl::UnavailableError(
        absl::StrCat("PAPI perf_event component disabled: ", info->disabled_reason));
  }
  return cidx;
}

}  // namespace opmap::agent
