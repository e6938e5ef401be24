// GraphNodeTable: the CUDA graph nodes this process built and the NVTX ranges open on
// the creating thread at that moment — recorded by CUPTI resource callbacks
// (cupti_graphs.h) whenever they happen, usually at start-up before any window, and
// written into the ring as kGraphNode records (abi/ring_records.h) by the CUPTI decoder
// before the first kernel, memcpy or memset of each node in each window. So every window,
// and every agent after a reconnect, can place graph kernels in their capture-time
// operators without the library sending the whole table.
//
// Bounded (GraphTableLimits; defaults: 131,072 nodes, created and cloned; 65,536 ranges;
// 16,384 graphs; 4 MiB of range names, each cut at 256 bytes): memory is reserved once
// with calloc (≈ 14 MiB of address space, resident only as it fills). A node, range or
// graph beyond a bound is not recorded and is counted — RingHeader::drops[kGraphTableFull]
// and counts() — and its kernels map as they did without the table (by graph launch).
//
// Thread safety: Add* from any thread (CUPTI calls back on the application thread that
// builds the graph): they serialize on one mutex, held for a bounded hash probe and a
// copy, and taken only by graph-building calls. Emit from one thread at a time (the decode
// worker): it takes no lock, reading entries the writers published with release stores.
// BeginWindow and counts() from any thread.
#ifndef OPMAP_AGENT_INJECT_CUPTI_GRAPH_NODES_H_
#define OPMAP_AGENT_INJECT_CUPTI_GRAPH_NODES_H_

#include <atomic>
#include <cstdint>
#include <mutex>

#include "agent/inject/graph_stack.h"
#include "agent/inject/ring_writer.h"

namespace opmap::inject {

struct GraphTableLimits {
  uint32_t max_nodes = 1u << 17;   // created and cloned nodes
  uint32_t max_ranges = 1u << 16;  // distinct pushes open at some node's creation
  uint32_t max_graphs = 1u << 14;
  uint32_t name_bytes = 4u << 20;  // their names' text
};

// A range name longer than this is cut in the table (kFlagNameTruncated on its level).
constexpr uint32_t kMaxGraphRangeName = 256;

struct GraphTableCounts {
  uint64_t nodes = 0;             // recorded, clones included
  uint64_t clones = 0;
  uint64_t ranges = 0;
  uint64_t graphs = 0;
  uint64_t execs = 0;             // graph instantiations seen
  uint64_t nodes_dropped = 0;     // nodes (or clones) over a bound
  uint64_t ranges_dropped = 0;    // ranges over a bound: their nodes keep the outer ones
  uint64_t unknown_originals = 0; // clones of nodes the table does not hold
};

class GraphNodeTable {
 public:
  GraphNodeTable() = default;
  ~GraphNodeTable();
  GraphNodeTable(const GraphNodeTable&) = delete;
  GraphNodeTable& operator=(const GraphNodeTable&) = delete;

  // Reserves the table; false when out of memory. `drops` (may be null, or invalid) is
  // where kGraphTableFull is counted. Once, before any other call.
  bool Init(const GraphTableLimits& limits, ring::RingWriter* drops);

  // A node created in graph `graph_id` by thread `tid`, under `levels` (outermost first,
  // the hooks' stack: their table_index slots are filled in here).
  void AddCreated(uint64_t node_id, uint32_t graph_id, uint64_t correlation, uint32_t tid,
                  GraphStackLevel* levels, uint32_t depth);
  // A clone made by instantiation: it carries its original's entry.
  void AddClone(uint64_t clone_id, uint64_t original_id);
  void NoteExec() { execs_.fetch_add(1, std::memory_order_relaxed); }

  // Every node is written again in the window that begins now.
  void BeginWindow() { epoch_.fetch_add(1, std::memory_order_acq_rel); }

  enum class Emit { kWritten, kAlreadyWritten, kUnknown, kRingFull };
  // Writes the kGraphNode record of `node_id` unless this window has it already. A record
  // the ring had no room for (kRingFull, counted by the ring) is tried again next time.
  Emit EmitNode(uint64_t node_id, ring::RingWriter* ring);

  GraphTableCounts counts() const;
  const GraphTableLimits& limits() const { return limits_; }

 private:
  // Plain integers, read across threads through std::atomic_ref: the arrays come from
  // calloc, which leaves untouched pages unmapped.
  struct Node {
    uint64_t id;
    uint64_t original;
    uint64_t correlation;
    uint64_t sequence;
    uint32_t graph;    // index into graphs_
    uint32_t range;    // innermost range, index into ranges_ (0 = none)
    uint32_t tid;
    uint32_t emitted;  // the epoch it was last written in
  };
  struct Range {
    uint64_t first;
    uint64_t last;
    uint32_t parent;  // 0 = outermost
    uint32_t name_offset;
    uint16_t name_len;
    uint16_t flags;
    uint32_t reserved;
  };
  struct Graph {
    uint64_t first;
    uint64_t last;
    uint32_t id;
    uint32_t reserved;
  };

  int64_t FindNode(uint64_t id) const;  // index into nodes_, -1 = absent
  bool InsertNode(const Node& node);    // mu_ held
  int64_t GraphIndex(uint32_t id);      // mu_ held; inserts; -1 = full
  uint32_t NewRange(uint32_t parent, const GraphStackLevel& level, uint64_t sequence);
  void CountDrop();

  GraphTableLimits limits_;
  ring::RingWriter* drops_ = nullptr;
  std::mutex mu_;  // writers only
  uint64_t sequence_ = 0;  // guarded by mu_
  Node* nodes_ = nullptr;
  uint32_t* node_slots_ = nullptr;  // index + 1, open addressing
  uint32_t node_mask_ = 0;
  Range* ranges_ = nullptr;         // [1, max_ranges]
  Graph* graphs_ = nullptr;
  uint32_t* graph_slots_ = nullptr;
  uint32_t graph_mask_ = 0;
  char* names_ = nullptr;
  uint32_t names_used_ = 0;  // guarded by mu_
  std::atomic<uint32_t> node_count_{0};
  std::atomic<uint32_t> range_count_{0};
  std::atomic<uint32_t> graph_count_{0};
  std::atomic<uint32_t> epoch_{1};  // entries start at emitted 0: never this epoch
  std::atomic<uint64_t> clones_{0};
  std::atomic<uint64_t> execs_{0};
  std::atomic<uint64_t> nodes_dropped_{0};
  std::atomic<uint64_t> ranges_dropped_{0};
  std::atomic<uint64_t> unknown_originals_{0};
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_GRAPH_NODES_H_
