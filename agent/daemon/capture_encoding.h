// A finished window's records as capture-file bytes (agent/transport/capture_file.h), the
// form `opmap attach` receives and `opmap analyze` reads: the same bytes
// OPMAP_CAPTURE_FILE would have written for the window, with the ring's counters at
// the window's end in the trailer.
#ifndef OPMAP_AGENT_DAEMON_CAPTURE_ENCODING_H_
#define OPMAP_AGENT_DAEMON_CAPTURE_ENCODING_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/transport/ring_reader.h"
#include "agent/daemon/record_buffer.h"

namespace opmap::agent {

absl::StatusOr<std::string> EncodeCapture(pid_t pid, uint64_t ring_capacity,
                                          const std::string& metadata,
                                          const RecordBuffer& records,
                                          const transport::RingCounters& counters);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_CAPTURE_ENCODING_H_
