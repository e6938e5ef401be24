// Node-id merge: the graph capture merge (capture_merge.h) for a trace that holds both a
// graph's capture and its replays with node ids on the replayed kernels, as an Nsight
// Systems export taken with --cuda-graph-trace=node does (docs/metrics.md, "Graph capture
// merge", "Nsight node ids").
//
// Such an export has, in CUDA_GRAPH_NODE_EVENTS, one creation event per graph node (on the
// capturing thread, inside the captured launch call that made the node) and one clone
// event per node of each instantiated graph (originalGraphNodeId: the node it copies);
// the replayed kernels carry the instantiated node's id. Each replayed event is followed
// through its clone chain to the creation event, and from there to the launch call the
// creation happened in: that is its node of the captured graph, found by identity rather
// than by kernel sequence (match method `node_id`). The copies are then made as by the
// sequence merge, so kernels take their capture-time NVTX ranges by the `graph_node` rule.
//
// A replayed graph none of whose events resolve keeps its kernels as they were, counted
// with the reason: an event without a node id (graph-level tracing), a node whose clone
// chain ends without a creation event (created before the export's range), a creation
// outside every stream capture the export holds (explicit cudaGraphAdd*Node, or a capture
// the export did not see), or nodes of two captured graphs in one launch.
#ifndef OPMAP_ANALYSIS_GRAPHS_NODE_ID_MERGE_H_
#define OPMAP_ANALYSIS_GRAPHS_NODE_ID_MERGE_H_

#include "analysis/graphs/capture_merge.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

// Merges `t`'s own captures into its graph replays by t.graph_nodes (see above). The
// report's capture_files is 0: the capture is `t`.
CaptureMergeReport MergeGraphNodeIds(Trace& t);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_NODE_ID_MERGE_H_
