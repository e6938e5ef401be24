// The graphs one capture trace recorded: each StreamBeginCapture ... StreamEndCapture pair
// on a thread, the launch calls between them (what became the graph's nodes, in program
// order) and the host ranges that enclose those launches (operators and nn.Module ranges:
// what the merge copies). Part of the graph capture merge (capture_merge.h).
#ifndef OPMAP_ANALYSIS_GRAPHS_CAPTURED_GRAPHS_H_
#define OPMAP_ANALYSIS_GRAPHS_CAPTURED_GRAPHS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model/trace.h"

namespace opmap::analysis {

// What a node of a captured graph is, as a replayed GPU event must be to match it.
enum class NodeKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

struct CapturedNode {
  int32_t api = -1;              // index into the capture trace's api_calls
  NodeKind kind = NodeKind::kKernel;
  std::string_view kernel;       // the launch's kernel name; empty when not recorded
};

struct CapturedGraph {
  int32_t capture = -1;          // index of the capture trace among the merge's inputs
  int32_t ordinal = 0;           // position among that trace's captured graphs
  int64_t begin_ns = 0;          // end of the StreamBeginCapture call
  int64_t end_ns = 0;            // start of the StreamEndCapture call
  int64_t process = kNone, thread = kNone;
  std::vector<CapturedNode> nodes;
  // Ranges (indices into the capture trace's ranges) that enclose at least one node's
  // launch — operator ranges and nn.Module ranges — and the operator ranges nested in such
  // an operator, sorted so that an enclosing range comes before what it encloses (start
  // ascending, end descending).
  std::vector<int32_t> ranges;
  bool all_named = true;         // every kernel node names its kernel
  // From a `capture_<N>_<MODE>` annotation around the capture (vLLM, SGLang), else -1.
  int64_t batch_size = -1;
};

// N of a `capture_<N>_<MODE>` annotation name, or -1.
int64_t CaptureAnnotationBatchSize(std::string_view range_name);

// True for launch calls that become a graph node that runs on the GPU: kernel launches
// (not GraphLaunch, not host-function launches), memcpy and memset calls.
bool IsNodeCreatingCall(std::string_view api_name, NodeKind* kind);

// The graphs `capture` recorded, in time order per thread. `capture_index` is stored in
// each. Ranges whose name is a serving step annotation (analysis/serving) are not copied.
std::vector<CapturedGraph> FindCapturedGraphs(const Trace& capture, int32_t capture_index);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_CAPTURED_GRAPHS_H_
