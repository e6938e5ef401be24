// Which importer reads a file, decided by its content, not its name: an Nsight Systems
// SQLite export ("SQLite format 3" header), a libopmap_inject capture file ("OPMAPCAP"),
// or else a Kineto trace (JSON or gzip). `opmap analyze` and `opmap import` share it so
// every format reaches the analysis and the collector the same way.
#ifndef OPMAP_CLI_TRACE_LOADER_H_
#define OPMAP_CLI_TRACE_LOADER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/model/trace.h"

namespace opmap::cli {

struct LoadOptions {
  // Parse progress for long inputs (Kineto only): bytes done, bytes in all.
  std::function<void(size_t, size_t)> progress;
};

absl::StatusOr<analysis::Trace> LoadTraceBytes(std::string bytes, const LoadOptions& options = {});

}  // namespace opmap::cli

#endif  // OPMAP_CLI_TRACE_LOADER_H_
