// execution_details.json: the index a serving engine's capture folder may carry (vLLM's
// capture_traces/, SGLang's): which capture trace holds which batch size and graph mode,
//   [{"file": "bs_32_rank0.json.gz", "batch_size": 32, "mode": "FULL"}, ...]
// Hostile input: a file name is one path component (no `/`, not `.` or `..`), a batch size
// an integer in [1, 2^31), anything else is refused with the entry and field named. Unknown
// fields are ignored. Optional: without it, every trace in the folder is a capture.
#ifndef OPMAP_ANALYSIS_GRAPHS_EXECUTION_DETAILS_H_
#define OPMAP_ANALYSIS_GRAPHS_EXECUTION_DETAILS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

struct CaptureFileEntry {
  std::string file;
  int64_t batch_size = -1;
  std::string mode;  // "" when absent
};

absl::StatusOr<std::vector<CaptureFileEntry>> ParseExecutionDetails(std::string_view json);

// The batch size a capture file's name gives (`bs_32_rank0.json.gz` → 32), or -1.
int64_t BatchSizeFromFileName(std::string_view file_name);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_GRAPHS_EXECUTION_DETAILS_H_
