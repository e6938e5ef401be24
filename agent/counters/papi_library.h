// The process-wide PAPI state, behind one function. PAPI_library_init, PAPI_thread_init
// and PAPI_multiplex_init must each run exactly once per process and before any other
// PAPI call; InitPapi() does all three on first use and returns the same result forever.
//
// PAPI 7 documents thread safety only loosely for attached event sets, and the agent
// reads a handful of counters per process per second, so instead of trusting it we
// serialize every PAPI call we make on PapiMutex(). Contention is negligible at that rate.
#ifndef OPMAP_AGENT_COUNTERS_PAPI_LIBRARY_H_
#define OPMAP_AGENT_COUNTERS_PAPI_LIBRARY_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace opmap::agent {

// Held around every PAPI call in agent/counters/.
absl::Mutex& PapiMutex();

// Initializes PAPI once (thread-safe). Unavailable with PAPI's own error text when the
// library can't start (or the header and library versions differ).
absl::Status InitPapi() ABSL_LOCKS_EXCLUDED(PapiMutex());

// "Event does not exist (PAPI error -7)": PAPI_strerror plus the code, since several
// codes share vague texts.
std::string PapiErrorText(int code);

// The index of PAPI's CPU counter component ("perf_event"), or Unavailable with the
// component's own disabled reason, e.g. "PAPI perf_event component disabled: Error
// libpfm4 no default PMU found". Requires InitPapi() to have succeeded.
absl::StatusOr<int> PapiCpuComponent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(PapiMutex());

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_PAPI_LIBRARY_H_
