// `opmap-agent power`: one probe of every GPU's power and power mode (NVML) and the CPU's
// RAPL energy, over a short window, for an operator checking what a host can report.
#ifndef OPMAP_AGENT_DAEMON_POWER_COMMAND_H_
#define OPMAP_AGENT_DAEMON_POWER_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::agent {

// Exit status: 0 with the probe printed (figures that could not be measured say
// `unavailable: <reason>`), 2 for a bad argument.
int RunPowerCommand(const std::vector<std::string>& args);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_POWER_COMMAND_H_
