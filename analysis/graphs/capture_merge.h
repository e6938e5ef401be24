// Graph capture merge: gives the kernels of replayed CUDA/HIP graphs the operators, shapes
// and modules that launched them when the graph was captured (docs/metrics.md, "Graph
// capture merge").
//
// A serving process captures its steps once (StreamBeginCapture ... StreamEndCapture: the
// launches are recorded into a graph, nothing runs) and then replays them with one
// GraphLaunch per step; its replay trace holds that one call and the graph's kernels, and
// no operator. A capture trace holds the operators, their Input Dims and the nn.Module
// stack around each launch call, and the launch call names its kernel (Kineto's args
// "kernel"). The merge matches each replayed graph to one captured graph:
//   1. the captured graph whose launch sequence equals the replay's kernel sequence
//      (kernel names; memcpy/memset by kind), preferring the capture whose batch size is
//      the replay step's (analysis/serving), else the smallest larger one, then the same
//      position among the step's graph launches as among the capture's graphs;
//   2. for a graph on several streams, the kernels of each stream in order (GPU order
//      interleaves streams; capture order is program order);
//   3. a capture holding extra launches the replay lacks (profiler loss): the replay's
//      kernels matched in order, skipping capture launches.
// Launch calls without a kernel name (CUDA's Kineto writes none) match any kernel; such
// matches are counted as unverified.
//
// For a matched graph launch G the capture's operator ranges and nn.Module ranges that
// enclose a matched launch are copied into the replay trace, with one launch call per
// replayed kernel, on a thread of their own (ReplayThread(G's thread)), laid out inside
// G's call in the order they had at capture (times are ranks, not durations: the copies
// have no host time of their own, and host-time figures leave them out). Each replayed
// kernel's correlation then names its launch copy, so the one kernel mapper places it in
// its capture-time operator by the `graph_node` rule and every figure downstream works as
// on an eager trace. Replayed graphs that match nothing keep their kernels as they were,
// counted with the reason.
#ifndef OPMAP_ANALYSIS_GRAPHS_CAPTURE_MERGE_H_
#define OPMAP_ANALYSIS_GRAPHS_CAPTURE_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

struct CaptureInput {
  const Trace* trace = nullptr;  // a capture trace (Kineto, imported with no GPU event allowed)
  std::string source;            // its file name, for messages
  int64_t batch_size = kNone;    // from execution_details.json or the file name, when known
  std::string mode;              // "FULL", "PIECEWISE", "DECODE", ... when known
};

// Replayed graph launches that matched no capture, grouped by reason.
struct UnmatchedGraphs {
  std::string reason;  // e.g. "no capture for batch size 48 (captured: 32)"
  int64_t launches = 0;
  int64_t kernels = 0;
  int64_t gpu_time_ns = 0;
  int64_t first_launch_ns = 0;  // start of the first such graph launch call
};

enum class MatchMethod : uint8_t { kExact = 0, kPerStream = 1, kSkipExtra = 2, kNodeId = 3 };
inline constexpr int kMatchMethodCount = 4;
std::string_view MatchMethodName(MatchMethod method);  // "exact", ..., "node_id"

struct CaptureMergeReport {
  int64_t capture_files = 0;
  int64_t captured_graphs = 0;   // StreamBeginCapture/EndCapture pairs in the captures
  int64_t graph_launches = 0;    // replay graph launch calls that own a GPU event
  int64_t matched_launches = 0;
  int64_t graph_events = 0;      // GPU events of those launches
  int64_t matched_events = 0;
  int64_t unverified_events = 0;  // matched to a launch call that names no kernel
  int64_t graph_gpu_time_ns = 0;
  int64_t matched_gpu_time_ns = 0;
  int64_t ranges_added = 0;
  int64_t launches_added = 0;
  int64_t by_method[kMatchMethodCount] = {};
  std::vector<UnmatchedGraphs> unmatched;  // most GPU time first
};

// Merges `captures` into `replay` in place (see above). Fails only on bad arguments (a null
// capture trace); a capture that matches nothing is a report, not an error.
absl::StatusOr<CaptureMergeReport> MergeGraphCaptures(Trace& replay,
                                                      absl::Span<const CaptureInput> captures);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_CAPTURE_MERGE_H_
