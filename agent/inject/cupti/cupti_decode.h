// Decoding one completed CUPTI activity buffer into ring records (abi/ring_records.h).
//
// The buffer is walked with CUPTI's own cuptiActivityGetNextRecord: it steps by the size
// of the newest record struct for each kind, which is the struct of the headers this file
// is compiled against only when libcupti matches them (CUDA 13.0: CUpti_ActivityKernel10,
// CUpti_ActivityMemcpy6, CUpti_ActivityMemset4). A libcupti of another major version would
// be refused earlier (it is loaded as libcupti.so.13).
//
// Records are written in buffer order. CUPTI keeps per-thread buffers, so a kernel and its
// launch API record can be in different buffers, in either order: nothing is reordered
// here, the analysis sorts by time and joins by correlation id.
//
// Thread safety: a DecodeContext belongs to one thread (the capture worker); the ring may
// be written by other threads at the same time.
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_DECODE_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_DECODE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/inject/cupti/cupti_api.h"
#include "agent/inject/cupti/graph_nodes.h"
#include "agent/inject/ring_writer.h"

namespace opmap::inject {

// Function names of runtime/driver callback ids, looked up once per cbid. CUPTI names
// carry the entry point's version ("cudaLaunchKernel_v7000"); the suffix is cut so the
// name is the one the application called ("cudaLaunchKernel"). "_ptsz"/"_ptds" stay:
// they tell the per-thread default stream variant apart.
class ApiNameCache {
 public:
  std::string_view Name(const CuptiApi& api, CUpti_CallbackDomain domain, uint32_t cbid);

 private:
  std::unordered_map<uint64_t, std::string> names_;
};

// What one buffer held, for tests and the README's accounting.
struct DecodeStats {
  uint64_t records = 0;    // records CUPTI walked, every kind
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t apis = 0;
  uint64_t external = 0;
  uint64_t skipped = 0;    // kinds opmap does not record (CUPTI knows them; fine)
  uint64_t bad = 0;        // counted as kBadRecord
  uint64_t ring_full = 0;  // records the ring had no room for (counted as kRingFull)
  uint64_t graph_nodes = 0;          // kGraphNode records written (graph_nodes.h)
  uint64_t graph_nodes_unknown = 0;  // graph events whose node the table does not hold
};

struct DecodeContext {
  ApiNameCache names;
  // The graph recorder's table (cupti_graphs.h), when it runs: a kernel, memcpy or memset
  // of a graph node is preceded by the node's kGraphNode record, once per window.
  std::atomic<GraphNodeTable*> graphs{nullptr};
};

// Removes a trailing "_v<digits>" ("cudaLaunchKernel_v7000" → "cudaLaunchKernel").
std::string_view StripVersionSuffix(std::string_view name);

// Walks `valid_size` bytes of `buffer` (as CUPTI's buffer-completed callback gave them)
// and writes one ring record per kernel, memcpy, memset, runtime/driver API call and
// external correlation (and, with ctx->graphs, a kGraphNode record before the first event
// of each graph node in the window). A walk error other than "end of buffer" (the rest of the buffer
// cannot be stepped over) counts one kBadRecord and ends the walk. `ring` may be null
// (records are counted in the stats and dropped: no window is open).
DecodeStats DecodeActivityBuffer(uint8_t* buffer, size_t valid_size, const CuptiApi& api,
                                 ring::RingWriter* ring, DecodeContext* ctx);

// Number of records in a buffer (for counting a buffer that is dropped undecoded).
uint64_t CountActivityRecords(uint8_t* buffer, size_t valid_size, const CuptiApi& api);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_DECODE_H_
