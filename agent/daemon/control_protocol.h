// The agent's control socket protocol (`opmap attach`, `opmap-agent status`). One request
// per connection, one text line:
//   status [json]
//   attach pid=N duration_ms=D stalls=0|1
// The answer starts with one line of space-separated key=value fields, `message=` last
// (it runs to the end of the line):
//   outcome=captured pid=N window_ms=D records=R drops=X counters_len=C message=...
//   outcome=not_registered|busy|error pid=N message=...
//   outcome=status message=...            (then the status text to EOF)
// After `outcome=captured` come C bytes of counter table (the window's CPU counters,
// unavailable ones named with the reason), then the capture itself to EOF, in the
// capture-file format (agent/transport/capture_file.h), so the client analyzes it with
// `opmap analyze`'s code.
// Peer credentials are checked on accept: root or the agent's uid.
// Fuzzed by tests/fuzz/control_message_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_AGENT_DAEMON_CONTROL_PROTOCOL_H_
#define OPMAP_AGENT_DAEMON_CONTROL_PROTOCOL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::agent {

inline constexpr size_t kMaxControlLine = 4096;

struct ControlRequest {
  enum class Kind { kStatus, kAttach } kind = Kind::kStatus;
  bool json = false;  // status
  int64_t pid = 0;    // attach
  absl::Duration duration = absl::Seconds(10);
  bool stalls = false;
};

absl::StatusOr<ControlRequest> ParseControlRequest(std::string_view line);
std::string FormatControlRequest(const ControlRequest& request);

// The answer line: fields in order, message last.
std::string FormatAnswer(const std::map<std::string, std::string>& fields,
                         std::string_view message);
// Splits an answer line into its fields ("message" holds the rest of the line).
std::map<std::string, std::string> ParseAnswer(std::string_view line);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_CONTROL_PROTOCOL_H_
