// The client side of the agent's control socket (control_protocol.h), for
// `opmap-agent status` and `opmap attach`.
#ifndef OPMAP_AGENT_DAEMON_AGENT_CLIENT_H_
#define OPMAP_AGENT_DAEMON_AGENT_CLIENT_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/daemon/control_protocol.h"

namespace opmap::agent {

struct AgentReply {
  std::map<std::string, std::string> fields;  // the answer line ("outcome", "message", ...)
  std::string body;                           // what followed it, to EOF
};

// Unavailable (with the path and errno text) when no agent listens on `socket_path`.
absl::StatusOr<AgentReply> CallAgent(const std::string& socket_path,
                                     const ControlRequest& request, absl::Duration timeout);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_AGENT_CLIENT_H_
