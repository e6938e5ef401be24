// The graphs a replay trace launches: each GraphLaunch call with the GPU events that
// carry its correlation id, and the serving step around the call. Part of the graph
// capture merge (capture_merge.h).
#ifndef OPMAP_ANALYSIS_GRAPHS_REPLAYED_GRAPHS_H_
#define OPMAP_ANALYSIS_GRAPHS_REPLAYED_GRAPHS_H_

#include <cstdint>
#include <vector>

#include "analysis/model/trace.h"

namespace opmap::analysis {

// One replayed graph launch: the call and its GPU events in GPU order.
struct ReplayedGraph {
  int32_t api = -1;
  std::vector<int32_t> events;
  int64_t batch_size = kNone;  // of the step annotation around the call
  int32_t position = 0;        // among the graph launches of that step
};

// The graph launch calls of `t` that own at least one GPU event, with those events in GPU
// start order, and the batch size and position of the innermost serving step annotation
// (serving/step_annotation.h) around each call on its thread.
std::vector<ReplayedGraph> FindReplayedGraphs(const Trace& t);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_REPLAYED_GRAPHS_H_
