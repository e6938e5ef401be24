// A small Nsight Systems SQLite export as `nsys profile --cuda-graph-trace=node` and
// `nsys export --type sqlite` write one (the tables and columns opmap reads, named as in
// Nsight's schema): a CUDA graph captured under NVTX ranges, instantiated (every node
// cloned) and replayed twice under a step range, each replayed kernel carrying its clone's
// graphNodeId. For the node-id merge's tests (analysis/graphs/node_id_merge.h).
#ifndef OPMAP_TESTS_TESTING_NSYS_GRAPH_EXPORT_H_
#define OPMAP_TESTS_TESTING_NSYS_GRAPH_EXPORT_H_

#include <string>

namespace opmap::testing {

struct NsysGraphExportOptions {
  // Also a third replay, of a graph whose node has no creation event (captured before
  // the profiled range): unmatched, with its reason.
  bool foreign_replay = false;
  // Leave out CUDA_GRAPH_NODE_EVENTS (an export without --cuda-graph-trace=node).
  bool without_node_events = false;
};

// Writes the export to `path` (replacing it); dies on an SQLite error. The graph:
//   NVTX "decoder.0" > "aten::mm"        > cudaLaunchKernel → gemm_kernel   (node 11 → 21)
//   NVTX "decoder.0" > "aten::rms_norm"  > cudaLaunchKernel → rms_norm_kernel (node 12 → 22)
// replayed by cudaGraphLaunch inside NVTX "decode_step" at 2 000 and 3 000 ns.
void WriteNsysGraphExport(const std::string& path, const NsysGraphExportOptions& options = {});

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_TESTING_NSYS_GRAPH_EXPORT_H_
