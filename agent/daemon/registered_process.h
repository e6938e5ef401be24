// The supervisor's record of one registered process (agent.h); private to agent/daemon.
#ifndef OPMAP_AGENT_DAEMON_REGISTERED_PROCESS_H_
#define OPMAP_AGENT_DAEMON_REGISTERED_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "agent/capture/control_channel.h"
#include "agent/capture/ring_reader.h"
#include "agent/daemon/agent.h"
#include "agent/daemon/process_resource.h"
#include "agent/daemon/record_buffer.h"
#include "agent/daemon/window_batches.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

struct RegisteredProcess {
  pid_t pid = 0;
  std::unique_ptr<capture::ControlChannel> channel;
  std::unique_ptr<capture::RingReader> ring;
  ProcFacts facts;
  opmap::v1::Resource resource;
  std::string metadata_text;  // the hello's "key=value" lines, for attach captures
  absl::Time registered_at;
  absl::Time next_window = absl::InfiniteFuture();

  // The window in progress (capturing == true).
  bool capturing = false;
  uint64_t window_id = 0;
  absl::Time window_started;
  absl::Duration window_length;
  bool stop_sent = false;
  std::unique_ptr<WindowConverter> converter;  // the window's records → batches, as they come
  RecordBuffer records;  // raw records, kept only for an attach (its capture bytes)
  int64_t budget_drops = 0;     // records discarded over the agent's memory budget
  bool ring_error_logged = false;  // a poisoned ring is logged once, not on every tick
  capture::RingCounters ring_before;
  std::function<void(AttachResult)> attach_done;  // set when an attach opened the window

  // What the library said it cannot do: (component, reason), latest per component.
  std::vector<std::pair<std::string, std::string>> unavailable;

  // Totals for status.
  int64_t windows = 0;
  int64_t records_total = 0;
  int64_t drops_total = 0;
  double last_records_per_s = 0;
  absl::Time last_window_end = absl::InfinitePast();
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_REGISTERED_PROCESS_H_
