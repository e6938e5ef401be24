// `opmap export --collector ADDR --out FILE`: the collector's ExportTrace as a Chrome-trace
// / Perfetto-loadable JSON file, written atomically (a temporary file in the same folder,
// renamed over FILE once complete). FILE is the CLI user's own path; the collector never
// sees it.
#ifndef OPMAP_CLI_EXPORT_COMMAND_H_
#define OPMAP_CLI_EXPORT_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

// Returns the process exit code: 0 ok; 2 bad usage, an unwritable FILE or a refused call;
// 1 collector unreachable or another failure.
int RunExport(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_EXPORT_COMMAND_H_
