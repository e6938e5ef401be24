// `opmap report --baseline REV --candidate REV`: the release recommendation of
// analysis/release from a collector's data, as Markdown, JSON or one HTML page, with the
// sign-offs recorded for the same pair (opmap signoff).
#ifndef OPMAP_CLI_REPORT_COMMAND_H_
#define OPMAP_CLI_REPORT_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

// 0 report written (whatever the verdict); 2 bad usage, bad profile/envelope file,
// refused call; 1 collector unreachable or another failure.
int RunReport(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_COMMAND_H_
