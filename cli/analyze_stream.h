// `opmap analyze` a part at a time: a Kineto file (gzip or plain JSON) is read a window at a
// time from the file (a gzip file through a mapping whose read pages are let go), its events
// go through EventSpill into time order and through StreamingParts into SummaryAccumulator.
// Peak memory is the spill buffer, one part, the names and the distinct values, not the
// events: docs/benchmarks.md "Traces of any size".
#ifndef OPMAP_CLI_ANALYZE_STREAM_H_
#define OPMAP_CLI_ANALYZE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/summary/trace_summary.h"

namespace opmap::cli {

struct StreamAnalyzeOptions {
  // Distinct percentile values held exactly, all rows together (stats::ValueBudget).
  uint64_t memory_budget_bytes = uint64_t{1} << 30;
  size_t spill_buffer_bytes = size_t{24} << 20;
  size_t part_events = size_t{1} << 16;
  std::function<void(size_t done, size_t total)> progress;
};

// True when the file at `path` starts like a Kineto trace (gzip, or '{' / '[' after
// whitespace), the only source streamed so far; other sources load whole.
bool StreamableTrace(const std::string& path);

// The summary of the trace at `path`; errors as ImportKinetoBytes's (InvalidArgument with
// the byte offset or event index, DataLoss for gzip damage) or the file's.
absl::StatusOr<analysis::TraceSummary> StreamAnalyzeFile(const std::string& path,
                                                         const StreamAnalyzeOptions& options);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_ANALYZE_STREAM_H_
