// The live graph capture merge (docs/metrics.md, "Graph capture merge", "Live"): what
// the offline merge (analysis/graphs/capture_merge.h) does with a separate capture trace,
// done here with the kGraphNode records libopmap_inject wrote (abi/ring_records.h).
//
// A kGraphNode record names one graph node (the id CUPTI puts on the kernels it runs) and
// the NVTX ranges that were open on the creating thread when it was captured, usually at
// start-up, long before the window. For every kernel, memcpy or memset with such a node
// and its graph launch call (cudaGraphLaunch, same correlation id) in the window, the
// node's ranges are copied onto ReplayThread(launch thread), once per launch and range,
// with one launch call copy (named kNodeLaunchName, a fresh correlation id) inside the
// innermost; the event's correlation then names that copy, so the one kernel mapper
// places it by the `graph_node` rule, exactly as after an offline merge.
//
// Layout: copies have an order, not host time of their own. Inside the launch call,
// position p of the node's graph (its creation sequence minus the graph's first, from the
// record) sits at start + (p + 1) × max(1, dur / (nodes + 1)); a range spans the
// positions of the first and last node created inside it; launch copies take no time.
// Every kernel's copies are therefore known from its own record and its launch alone:
// kernels of one launch may arrive in any order and in any chunk (TakeCompleted), and
// nested copies of one node still sort outermost first. A graph of more nodes than its
// launch call has nanoseconds spills past the call's end (1 ns per position). A child
// graph's nodes are laid out by their own graph's order, which may interleave with the
// parent's in one launch (stream capture builds none).
//
// Events whose launch call has not arrived yet (CUPTI buffers reach the ring in any
// order) are held here until it does, or until Flush (window end): then they stay as they
// were, counted. Every bound below is counted when reached, never silent.
#ifndef OPMAP_ANALYSIS_IMPORT_CAPTURE_GRAPHS_H_
#define OPMAP_ANALYSIS_IMPORT_CAPTURE_GRAPHS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

// What the placement did in one window (FinishCaptureTrace turns these into
// "graph_nodes.*" counters when the window held kGraphNode records).
struct GraphNodeCounts {
  int64_t records = 0;          // kGraphNode records accepted
  int64_t graph_events = 0;     // GPU events that carry a graph node id
  int64_t placed = 0;           // ... given a launch copy: mapped by graph_node
  int64_t unknown_node = 0;     // ... whose node no record named (table full, recorded off)
  int64_t no_ranges = 0;        // ... whose node was built outside every NVTX range
  int64_t no_launch = 0;        // ... whose graph launch call never came (before the window)
  int64_t unplaceable = 0;      // ... outside their graph's extent, or out of fresh ids
  int64_t held_over_bound = 0;  // ... released unplaced because too many were held
  int64_t ranges_added = 0;
  int64_t launches_added = 0;
};

class GraphNodePlacer {
 public:
  // Bounds on what a (hostile) producer can make this keep; a record past one is refused.
  static constexpr size_t kMaxNodes = 1 << 18;
  static constexpr size_t kMaxRanges = 1 << 18;
  static constexpr size_t kMaxGraphs = 1 << 16;
  static constexpr size_t kMaxLaunches = 1 << 20;  // graph launch calls remembered
  static constexpr size_t kMaxHeld = 1 << 18;      // events waiting for their launch call
  static constexpr size_t kMaxCopySets = 4096;     // launches whose copied ranges are known
  // The name of the launch call copies.
  static constexpr std::string_view kNodeLaunchName = "GraphNodeLaunch";

  explicit GraphNodePlacer(int64_t pid) : pid_(pid) {}

  // One kGraphNode record (header included, size ≥ its fixed part). False with `*why` for
  // a record that is malformed or over a bound; names go into `t.strings`.
  bool AddNode(std::string_view record, Trace& t, std::string* why);
  // Every API call added to `t` (fresh correlation ids stay clear of theirs); a graph
  // launch call also places the events held for it.
  void AddCall(const ApiCall& call, Trace& t);
  // A GPU event with a graph node id: placed and appended to t.gpu_events, or held.
  void AddEvent(GpuEvent event, Trace& t);
  // Window end: held events go to t.gpu_events as they are.
  void Flush(Trace& t);

  size_t held() const { return held_count_; }
  const GraphNodeCounts& counts() const { return counts_; }

 private:
  struct Level {
    uint64_t first = 0;
    uint64_t last = 0;  // 0 = open when written
    StringId name = kEmptyString;
    int64_t flops = kNone;
    int64_t bytes = kNone;
    StringId input_dims = kEmptyString;
  };
  struct Node {
    uint64_t sequence = 0;
    uint32_t graph = 0;
    std::vector<uint64_t> levels;  // range keys, outermost first
  };
  struct Launch {
    int64_t start_ns = 0;
    int64_t dur_ns = 0;
    int64_t thread = 0;
  };

  void Place(GpuEvent event, const Node& node, const Launch& launch,
             int64_t correlation, Trace& t);
  absl::flat_hash_set<uint64_t>& CopiedRanges(int64_t correlation);

  int64_t pid_;
  GraphNodeCounts counts_;
  absl::flat_hash_map<uint64_t, Node> nodes_;
  absl::flat_hash_map<uint64_t, Level> levels_;
  // Each graph's extent as its first record gave it: every kernel of a launch is laid
  // out on the same positions whatever later records say.
  absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> graphs_;
  absl::flat_hash_map<int64_t, Launch> launches_;
  absl::flat_hash_map<int64_t, std::vector<GpuEvent>> held_;
  size_t held_count_ = 0;
  std::deque<int64_t> held_order_;  // correlations, oldest first (may name released ones)
  absl::flat_hash_map<int64_t, absl::flat_hash_set<uint64_t>> copied_;
  std::deque<int64_t> copied_order_;
  int64_t max_real_correlation_ = 0;
  int64_t next_fresh_ = 0xFFFFFFFFll;  // counts down: wire correlations are 32 bits
  StringId launch_name_ = kEmptyString;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CAPTURE_GRAPHS_H_
