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
#include "agent/transport/control_channel.h"
#include "agent/transport/ring_reader.h"
#include "agent/daemon/power_monitor.h"
#include "agent/daemon/process_resource.h"
#include "agent/spool/scoped_fd.h"
#include "agent/daemon/window_session.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

struct RegisteredProcess {
  pid_t pid = 0;
  // Who `pid` was at registration (counters/process_counters.h): a pid reused after this
  // process exits is never read as this one.
  ScopedFd pidfd;
  unsigned long long start_time = 0;
  std::unique_ptr<transport::ControlChannel> channel;
  std::unique_ptr<transport::RingReader> ring;
  ProcFacts facts;
  opmap::v1::Resource resource;
  GpuSelection gpus;          // from its CUDA_VISIBLE_DEVICES: whose GPU power its windows get
  std::string metadata_text;  // the hello's "key=value" lines, for attach captures
  absl::Time registered_at;
  absl::Time next_window = absl::InfiniteFuture();

  // The window in progress, if any, and the id of the latest one (ids count from 1 per
  // registration; the session id tells runs and processes apart).
  std::unique_ptr<WindowSession> window;
  uint64_t window_id = 0;
  bool ring_error_logged = false;  // a poisoned ring is logged once, not on every tick
  bool capturing() const { return window != nullptr; }

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
