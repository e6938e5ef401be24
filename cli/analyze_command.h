// `opmap analyze TRACE... [--format table|json|csv] [--top N]`: offline analysis of
// PyTorch-profiler (Kineto) traces with the same analysis library the collector uses.
#ifndef OPMAP_CLI_ANALYZE_COMMAND_H_
#define OPMAP_CLI_ANALYZE_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

// Returns the process exit code: 0 ok, 2 bad usage or bad input, 1 internal error.
int RunAnalyze(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_ANALYZE_COMMAND_H_
