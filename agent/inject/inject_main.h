// Start-up and shut-down of libopmap_inject.so, whichever way it was loaded:
//   LD_PRELOAD               the constructor (inject_main.cc)
//   NVTX_INJECTION64_PATH    InitializeInjectionNvtx2 (nvtx_install.cc)
//   CUDA_INJECTION64_PATH    InitializeInjection, called by the driver inside cuInit
// The first of them creates the ring and starts one thread: the control thread (agent
// mode) or the file-capture thread (OPMAP_CAPTURE_FILE). At exit an open window is ended
// and reported and CUPTI finalized, each step bounded so exit never hangs.
#ifndef OPMAP_AGENT_INJECT_INJECT_MAIN_H_
#define OPMAP_AGENT_INJECT_INJECT_MAIN_H_

#include <cstdint>

#include "agent/inject/metadata.h"

namespace opmap::inject {

// Idempotent and thread-safe; `how` is recorded for the hello metadata.
void EnsureStarted(LoadedBy how);
// OPMAP_GRAPH_NODES=1: starts the CUDA graph recorder (cupti/cupti_graphs.h). Called from
// InitializeInjection, inside cuInit — before the process can build a graph, and before
// EnsureStarted. Once.
void StartGraphRecordingIfAsked();
// NVTX hooks are installed in at least one NVTX instance.
void NoteNvtxAttached();
// OPMAP_INIT_WAIT_MS: blocks the caller until the first window has its NVTX hooks on, there
// is no agent to wait for, or the wait ran out. No-op when the variable is unset or 0 (in
// file mode the default is 5000). Called from InitializeInjectionNvtx2 only.
void WaitForFirstWindow();

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_INJECT_MAIN_H_
