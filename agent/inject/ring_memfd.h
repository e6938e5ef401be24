// Creates the shared ring: a sealed memfd holding a RingHeader and `capacity` data bytes.
//
// The seals (no shrink, no grow, no more seals) matter to both sides: nobody holding the
// fd — the agent included — can truncate it under the mapping, which would turn the next
// record write into SIGBUS in the profiled process, and the agent checks the seal before
// it maps the ring so the producer cannot do that to the agent either.
#ifndef OPMAP_AGENT_INJECT_RING_MEMFD_H_
#define OPMAP_AGENT_INJECT_RING_MEMFD_H_

#include <cstdint>

namespace opmap::inject {

struct RingMemory {
  int fd = -1;              // close-on-exec; handed to the agent with SCM_RIGHTS
  void* base = nullptr;     // kHeaderBytes + capacity, MAP_SHARED, header initialized
  uint64_t capacity = 0;
};

// False when the kernel refuses (no memfd_create, seals or memory): the library then stays
// dormant for the life of the process.
bool CreateRing(uint64_t capacity, RingMemory* out);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_RING_MEMFD_H_
