// Reads a whole file into memory: for the importers (which take bytes, never paths) and
// for the small files the tools are pointed at (tokens, certificates, profiles).
#ifndef OPMAP_COMMON_IO_READ_FILE_H_
#define OPMAP_COMMON_IO_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace opmap::io {

// NotFound / PermissionDenied / InvalidArgument (a directory) with the OS reason.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

}  // namespace opmap::io

#endif  // OPMAP_COMMON_IO_READ_FILE_H_
