// `opmap attach`: a capture window on running processes, through the local agent (or,
// with no agent running, through the agent's own logic in this process), with a local
// report. See attach_command.cc's usage text.
#ifndef OPMAP_CLI_ATTACH_COMMAND_H_
#define OPMAP_CLI_ATTACH_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

int RunAttach(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_ATTACH_COMMAND_H_
