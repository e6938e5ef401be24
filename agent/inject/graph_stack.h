// What the NVTX hooks hand the CUDA graph recorder (cupti/cupti_graphs.h) when CUPTI
// reports a new graph node: the calling thread's open push/pop ranges at that moment,
// outermost first. Header-only and CUPTI-free, so the hooks build without the toolkit.
#ifndef OPMAP_AGENT_INJECT_GRAPH_STACK_H_
#define OPMAP_AGENT_INJECT_GRAPH_STACK_H_

#include <cstdint>

namespace opmap::inject {

struct GraphStackLevel {
  const char* name;  // the hooks' copy; valid until the range is popped
  uint32_t name_len;
  bool truncated;
  // The hooks' slot for this push's index in the graph table (0 = not interned yet). Only
  // the owning thread reads or writes it, during the callback that passed it.
  uint32_t* table_index;
};

// Fills `out` (room for `max`) with the calling thread's open ranges; returns how many.
// 0 when the thread has none, or its stack is not being kept (nvtx_hooks.h).
using GraphStackFn = uint32_t (*)(GraphStackLevel* out, uint32_t max);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_GRAPH_STACK_H_
