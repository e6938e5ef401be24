// `--capture PATH` (opmap analyze, opmap import): the graph capture traces to merge into
// a replay trace (analysis/graphs/capture_merge.h). PATH is a capture trace or a folder of
// them, as vLLM's capture_traces/ and SGLang's bs_<N>_rank<R>.json.gz are written; a
// folder's execution_details.json, when present, names the files and their batch sizes,
// else every *.json / *.json.gz in it is a capture. Batch sizes come from that index, else
// the file name (bs_<N>), else the capture's own capture_<N>_<MODE> annotation.
#ifndef OPMAP_CLI_CAPTURE_LOADER_H_
#define OPMAP_CLI_CAPTURE_LOADER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/graphs/capture_merge.h"
#include "analysis/model/trace.h"

namespace opmap::cli {

struct LoadedCaptures {
  std::vector<std::unique_ptr<analysis::Trace>> traces;
  std::vector<analysis::CaptureInput> inputs;  // point into `traces`
};

// Errors name the file (and the index entry) at fault. `progress`, when set, is called
// before each file with (index from 1, count, file name).
absl::StatusOr<LoadedCaptures> LoadCaptures(
    const std::vector<std::string>& paths,
    const std::function<void(size_t, size_t, const std::string&)>& progress = {});

// Loads `paths`, merges them into `replay` and, unless quiet, says on stderr what matched:
// "opmap analyze: graph capture merge: 1 of 1 graph launches (421 of 421 kernels, 100.0%
// of their GPU time) matched ...". Returns the report for the output.
absl::StatusOr<analysis::CaptureMergeReport> MergeCaptureFiles(
    const std::vector<std::string>& paths, analysis::Trace& replay, const std::string& tool,
    bool quiet);

// The node-id merge of an Nsight export that recorded graph nodes (Trace::graph_nodes not
// empty; analysis/graphs/node_id_merge.h), said on stderr as above unless quiet.
analysis::CaptureMergeReport MergeGraphNodeIds(analysis::Trace& trace, const std::string& tool,
                                               bool quiet);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_CAPTURE_LOADER_H_
