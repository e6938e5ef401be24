// Per-thread NVTX state: the stack of open push/pop ranges (a pop writes the complete
// kRange record, so the push's start time, attributes and name wait here), a small arena
// holding copies of their names (the caller's string may be gone by the pop), and the
// re-entrancy guard.
//
// Fixed size and trivially destructible: no allocation in a hook (beyond the TLS block the
// loader allocates on a thread's first use), no destructor registered per thread.
// Touched only while a window is open, so dormant hooks never fault in the TLS block —
// except where stacks are kept for the CUDA graph recorder (capture_state.h kKeepStacks):
// then every thread that pushes a range has one.
#ifndef OPMAP_AGENT_INJECT_NVTX_THREAD_H_
#define OPMAP_AGENT_INJECT_NVTX_THREAD_H_

#include <cstdint>

#include "agent/inject/nvtx_registry.h"

namespace opmap::inject {

constexpr uint32_t kMaxDepth = 64;          // deeper pushes: kNestingTooDeep
constexpr uint32_t kNameArenaBytes = 16 * 1024;

struct OpenRange {
  int64_t start_ns;
  uint64_t payload;
  const DomainEntry* domain;  // nullptr: the default domain
  const char* name;           // into the arena, or a registered string
  uint32_t name_len;
  uint32_t category;
  uint32_t color;
  uint32_t arena_end;         // arena bytes in use up to and including this entry's name
  uint8_t payload_kind;
  bool truncated;
  uint32_t generation;   // the window it was pushed in; 0 = while no window captured NVTX
  uint32_t graph_index;  // its range in the graph table (graph_stack.h); 0 = none yet
};

struct ThreadState {
  bool in_hook;        // re-entrancy guard (a signal handler or our own allocation)
  uint32_t tid;        // gettid(), 0 until first needed
  uint32_t generation; // the window the stack belongs to; another window resets it
  uint32_t depth;      // entries in `stack`
  uint32_t overflow;   // pushes beyond kMaxDepth still open (dropped with their pops)
  bool keeping;        // the stack has been kept since kKeepStacks came on: it is exact
  OpenRange stack[kMaxDepth];
  char arena[kNameArenaBytes];
};

// Sets the guard for a hook's duration; `entered()` false: this thread is already inside a
// hook, so the call must do nothing.
class HookGuard {
 public:
  explicit HookGuard(ThreadState& t) : t_(t), entered_(!t.in_hook) { t.in_hook = true; }
  ~HookGuard() {
    if (entered_) t_.in_hook = false;
  }
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;
  bool entered() const { return entered_; }

 private:
  ThreadState& t_;
  bool entered_;
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_NVTX_THREAD_H_
