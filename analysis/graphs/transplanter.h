// The half of the graph capture merge that writes (capture_merge.h): given how each
// replayed graph matches a captured one, copies the capture's ranges and one launch call
// per replayed event into the replay trace and points each event at its launch copy.
// Shared by the sequence merge (MergeGraphCaptures) and the node-id merge
// (node_id_merge.h); internal to analysis/graphs.
#ifndef OPMAP_ANALYSIS_GRAPHS_TRANSPLANTER_H_
#define OPMAP_ANALYSIS_GRAPHS_TRANSPLANTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "analysis/graphs/capture_merge.h"
#include "analysis/graphs/captured_graphs.h"
#include "analysis/graphs/replayed_graphs.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

// For each replayed event (by position in ReplayedGraph::events), its node of the graph.
using Alignment = std::vector<int32_t>;

struct GraphMatch {
  int32_t graph = -1;  // index into the captured graphs
  MatchMethod method = MatchMethod::kExact;
  Alignment alignment;
};

// A match for one replayed graph, or the reason there is none.
using GraphMatchFinder =
    std::function<std::pair<std::optional<GraphMatch>, std::string>(const ReplayedGraph&)>;

// Every replayed graph of `replay` that `find` matches gets its copies (once per distinct
// graph the finder is asked about: replays of one graph reuse the answer); the rest are
// counted in `report` by reason. Fills every field of `report` but capture_files and
// captured_graphs, and adds the graph_merge.* counters to replay.info. A capture may be
// `replay` itself (Nsight exports hold the capture and its replays).
void TransplantMatches(Trace& replay, absl::Span<const CaptureInput> captures,
                       const std::vector<CapturedGraph>& graphs, const GraphMatchFinder& find,
                       CaptureMergeReport& report);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_TRANSPLANTER_H_
