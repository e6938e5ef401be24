#include "agent/inject/capture_state.h"

#include <sched.h>

#include "abi/control_messages.h"

namespace opmap::inject {

constinit CaptureState g_state;
constinit std::atomic<bool> g_nvtx_attached{false};
constinit WriterStripe g_writer_stripes[kWriterStripes];

bool WaitForWriters(int64_t timeout_ns) {
  const int64_t deadline = NowNs() + timeout_ns;
  for (int i = 0; i < kWriterStripes; ++i) {
    while (g_writer_stripes[i].writers.load(std::memory_order_seq_cst) != 0) {
      if (NowNs() > deadline) return false;
      sched_yield();
    }
  }
  return true;
}

}  // namespace opmap::inject

// Exported (libopmap_inject.map): 1 while an NVTX range pushed now would be read — a window
// that captures NVTX is open, or graph-node stacks are kept (OPMAP_GRAPH_NODES=1) — else 0.
// Annotators (python/opmap_torch) ask it once per model forward and install their
// per-module hooks only while it is 1, so a dormant process pays one call per forward.
// One relaxed load: never blocks, never throws, callable from any thread at any time.
extern "C" __attribute__((visibility("default"))) int opmap_nvtx_ranges_wanted() noexcept {
  const uint64_t state = opmap::inject::g_state.window_state.load(std::memory_order_relaxed);
  return (opmap::inject::FlagsOf(state) & (opmap::ring::kCaptureNvtx | opmap::inject::kKeepStacks))
             != 0
             ? 1
             : 0;
}
