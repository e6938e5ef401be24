// `opmap query latency|breakdown|kernels --collector ADDR ...`: the collector's Query
// service from the command line, printed as a table, JSON or CSV (µs with 3 decimals,
// like `opmap analyze`).
#ifndef OPMAP_CLI_QUERY_COMMAND_H_
#define OPMAP_CLI_QUERY_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

// Returns the process exit code: 0 ok; 2 bad usage or a refused call
// (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT); 1 collector unreachable
// (UNAVAILABLE) or another failure.
int RunQuery(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_QUERY_COMMAND_H_
