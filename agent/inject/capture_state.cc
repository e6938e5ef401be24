#include "agent/inject/capture_state.h"

#include <sched.h>

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
