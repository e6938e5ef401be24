// The outcome of one `opmap attach`: an explicit outcome per PID, never silence.
#ifndef OPMAP_AGENT_DAEMON_ATTACH_RESULT_H_
#define OPMAP_AGENT_DAEMON_ATTACH_RESULT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/time/time.h"

namespace opmap::agent {

struct AttachResult {
  std::string outcome;  // "captured", "not_registered", "busy", "error"
  std::string message;
  pid_t pid = 0;
  absl::Duration window;
  int64_t records = 0;
  int64_t drops = 0;
  std::string capture;   // capture-file bytes (agent/transport/capture_file.h) when captured
  std::string counters;  // the window's CPU counters as a small table, unavailable ones named
};

inline AttachResult AttachOutcome(std::string outcome, pid_t pid, std::string message) {
  AttachResult r;
  r.outcome = std::move(outcome);
  r.pid = pid;
  r.message = std::move(message);
  return r;
}

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_ATTACH_RESULT_H_
