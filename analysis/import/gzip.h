// Gunzip for trace bytes held in memory. The importer is handed bytes, never a path:
// reading files is the caller's business (analysis/ does no I/O).
#ifndef OPMAP_ANALYSIS_IMPORT_GZIP_H_
#define OPMAP_ANALYSIS_IMPORT_GZIP_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace opmap::analysis {

bool LooksGzipped(std::string_view bytes);

// Inflates a gzip stream (one or more members) into a string whose capacity leaves at
// least `tail_padding` spare bytes past size() — simdjson reads that far ahead, so the
// parser can use the result in place without a second copy. The gzip trailer's ISIZE is
// used to size the buffer once. Errors name the compressed byte offset where the stream
// broke (e.g. a truncated file).
absl::StatusOr<std::string> Gunzip(std::string_view compressed, size_t tail_padding);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_GZIP_H_
