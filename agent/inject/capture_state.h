// The process-wide capture state every hook reads, and the two helpers that make a window's
// end clean: the control thread clears the flags and then waits until no hook is still
// writing a record it decided on under the old window (WriteScope / WaitForWriters).
//
// The state is constinit and never destroyed: hooks run on application threads until the
// very end of the process (static destructors included), and the control thread is never
// joined, so nothing here may go away at exit.
#ifndef OPMAP_AGENT_INJECT_CAPTURE_STATE_H_
#define OPMAP_AGENT_INJECT_CAPTURE_STATE_H_

#include <time.h>

#include <atomic>
#include <cstdint>

#include "agent/inject/ring_writer.h"

namespace opmap::inject {

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// window_state packs the window generation (high 32 bits: 1, 2, ... one per window) with
// the CaptureFlags on now (low 32 bits), so one load tells a hook both whether to record
// and which window a record belongs to. 0 = dormant.
inline uint32_t FlagsOf(uint64_t state) { return static_cast<uint32_t>(state); }
inline uint32_t GenerationOf(uint64_t state) { return static_cast<uint32_t>(state >> 32); }

// Not a control flag (abi/control_messages.h uses the low bits): set at load when the
// CUDA graph recorder is asked for (OPMAP_GRAPH_NODES=1), cleared only if it cannot start.
// The push/pop hooks then keep every thread's stack of open ranges while no window is open
// too, since a graph node's ranges are read from it whenever the graph is built.
constexpr uint32_t kKeepStacks = 1u << 31;
inline bool KeepingStacks(uint64_t state) { return (FlagsOf(state) & kKeepStacks) != 0; }

struct CaptureState {
  // The hot path's one load. Acquire, which costs the same as relaxed on x86 and orders
  // the reads of `writer` after it on weaker CPUs.
  alignas(64) std::atomic<uint64_t> window_state{0};
  // Set once at load time, before any window can begin; valid() false = stay dormant.
  alignas(64) ring::RingWriter writer;
};

extern constinit CaptureState g_state;

// True once some NVTX instance in the process has installed our hooks (a window asked for
// NVTX before that reports it as unavailable, with the reason).
extern constinit std::atomic<bool> g_nvtx_attached;

inline uint64_t LoadWindowState() { return g_state.window_state.load(std::memory_order_acquire); }

// The window controller's store: `state`, with kKeepStacks kept as it is (a CAS, since
// KeepStacks may set it from any thread at any time).
inline void StoreWindowState(uint64_t state) {
  uint64_t old = g_state.window_state.load(std::memory_order_relaxed);
  while (!g_state.window_state.compare_exchange_weak(
      old, (state & ~uint64_t{kKeepStacks}) | (old & kKeepStacks), std::memory_order_seq_cst)) {
  }
}
inline void KeepStacks() {
  g_state.window_state.fetch_or(kKeepStacks, std::memory_order_seq_cst);
}

// Hooks that write to the ring do it inside a WriteScope, which re-checks that the window
// they decided on (the window_state they loaded) is still the current one after announcing
// themselves. Together with WaitForWriters this is a Dekker handshake: either the hook sees
// the cleared state and writes nothing, or the control thread sees the hook and waits for
// it, so no record of a window lands after that window's kWindow end mark.
// Striped by thread so that threads do not share one counter's cache line.
constexpr int kWriterStripes = 16;
struct alignas(64) WriterStripe {
  std::atomic<uint32_t> writers{0};
};
extern constinit WriterStripe g_writer_stripes[kWriterStripes];

class WriteScope {
 public:
  WriteScope(uint32_t tid, uint64_t expected_state)
      : stripe_(g_writer_stripes[tid % kWriterStripes]) {
    stripe_.writers.fetch_add(1, std::memory_order_seq_cst);
    // kKeepStacks may come on mid-window; it changes nothing a record depends on.
    ok_ = ((g_state.window_state.load(std::memory_order_seq_cst) ^ expected_state) &
           ~uint64_t{kKeepStacks}) == 0;
  }
  ~WriteScope() { stripe_.writers.fetch_sub(1, std::memory_order_release); }
  WriteScope(const WriteScope&) = delete;
  WriteScope& operator=(const WriteScope&) = delete;
  bool ok() const { return ok_; }

 private:
  WriterStripe& stripe_;
  bool ok_ = false;
};

// After window_state changed: waits until every hook that might still write under the old
// state has left its WriteScope. Bounded (a hook preempted mid-write for longer than
// `timeout_ns` is not waited for: its record then follows the end mark; readers place
// records by their timestamps anyway). False on timeout.
bool WaitForWriters(int64_t timeout_ns);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CAPTURE_STATE_H_
