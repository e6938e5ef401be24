// Reads a whole file into memory for the importers (which take bytes, never paths).
#ifndef OPMAP_CLI_READ_FILE_H_
#define OPMAP_CLI_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace opmap::cli {

// NotFound / PermissionDenied / InvalidArgument (a directory) with the OS reason.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_READ_FILE_H_
