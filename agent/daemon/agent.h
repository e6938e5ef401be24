// opmap-agent's supervisor: one thread that owns every registered process and wires the
// parts — the registration socket (registry.h), when windows open and for how long
// (window_policy.h), each window from drain to batches (window_session.h), the control
// socket (control_server.h) and the attach queue. It notices exits and keeps the agent's
// own CPU under its budget by shrinking windows. Counters (counter_monitor.h) and the
// upload (uploader.h) run on their own threads.
//
// The target process comes first: the agent never blocks a library (the ring drops and
// counts when the agent is slow), and everything the agent itself discards is counted
// in the batches it sends and in `status`.
#ifndef OPMAP_AGENT_DAEMON_AGENT_H_
#define OPMAP_AGENT_DAEMON_AGENT_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/daemon/agent_config.h"
#include "agent/spool/outbox_types.h"
#include "agent/daemon/attach_result.h"
#include "agent/daemon/window_policy.h"
#include "agent/daemon/window_session.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

class ControlServer;
class CounterMonitor;
class PowerMonitor;
class Registry;
struct RegisteredProcess;

// What the agent's own upload path reports for `status`.
struct UploadStats {
  int64_t queued_batches = 0;   // unacked, memory and spool together
  int64_t memory_batches = 0;   // of those, not yet on disk (lost to a SIGKILL)
  int64_t spool_bytes = 0;
  int64_t sent_batches = 0;
  int64_t acked_batches = 0;
  int64_t dropped_batches = 0;
  std::array<uint64_t, kDropCauseCount> dropped_by_cause{};  // by DropCause
  bool connected = false;       // the last stream ended well (or is running)
  std::string collector_state;  // "connected", "reconnecting: <why>", "none configured"
};

class Agent {
 public:
  Agent(AgentConfig config, BatchSink sink, std::function<UploadStats()> upload_stats);
  ~Agent();

  // Binds both sockets; then Run() serves until Stop().
  absl::Status Start();
  void Run();
  void Stop();  // any thread; Run() returns after closing windows and detaching

  // Scheduling off: windows only through attach (opmap attach without a daemon).
  void DisableSchedule() { schedule_enabled_ = false; }

  // The status text (`opmap-agent status`), table or JSON.
  std::string StatusText(bool json);
  // The same figures as Prometheus text (--metrics-listen; docs/operations.md).
  std::string MetricsText();

  // Opens a window of `duration` on `pid` as soon as it is registered and no other attach
  // holds it (a scheduled window is let finish first); waits up to `registration_wait`
  // for the library to register. `done` runs once, on the supervisor thread or a
  // responder thread: it must not call back into the agent.
  void RequestAttach(pid_t pid, absl::Duration duration, bool stalls,
                     absl::Duration registration_wait, std::function<void(AttachResult)> done);

 private:
  void Tick(absl::Time now);
  // Installs the registrations the registry completed (all in progress, when `wait`).
  void InstallRegistrations(bool wait);
  void ReadChannel(RegisteredProcess& p, absl::Time now);
  void StartWindow(RegisteredProcess& p, absl::Duration duration, bool stalls, absl::Time now,
                   std::function<void(AttachResult)> attach_done = nullptr);
  // Hands what the ring holds to the window: at most 2^18 records per tick, everything
  // it holds when `final` (the window is ending).
  void DrainWindow(RegisteredProcess& p, bool final = false);
  void FinishWindow(RegisteredProcess& p, absl::Time now, std::string note);
  void Forget(RegisteredProcess& p, absl::Time now, std::string why);
  void ScheduleNext(RegisteredProcess& p, absl::Time now);
  void UpdateCpuBudget(absl::Time now);
  void ServePendingAttaches(absl::Time now);
  int Capturing() const;

  AgentConfig config_;
  BatchSink sink_;
  std::function<UploadStats()> upload_stats_;
  std::string host_;
  std::string agent_id_;
  int64_t boot_ns_ = 0;  // distinguishes this run's session ids from a previous run's
  std::atomic<bool> stop_{false};
  bool schedule_enabled_ = true;
  absl::BitGen rng_;

  // Registrations and control requests are served on threads of their own (bounded),
  // so a slow or hostile peer never holds the supervisor.
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<ControlServer> control_;

  std::mutex mu_;  // guards processes_ and the stats StatusText reads
  std::map<pid_t, std::unique_ptr<RegisteredProcess>> processes_;
  std::vector<std::string> exited_;  // recent exits, for status
  std::unique_ptr<CounterMonitor> counters_;
  std::unique_ptr<PowerMonitor> power_;
  struct PendingAttach {
    pid_t pid;
    absl::Duration duration;
    bool stalls;
    absl::Time give_up;
    std::function<void(AttachResult)> done;
  };
  std::vector<PendingAttach> pending_attaches_;  // guarded by mu_

  // When windows open and how long they last (the CPU budget scales them): fed the
  // agent's own CPU seconds each tick.
  WindowPolicy policy_;
  int64_t peak_rss_bytes_ = 0;
  // Since start, over every process (exited ones included): for status and the bench.
  int64_t windows_total_ = 0;
  int64_t records_total_ = 0;
  int64_t drops_total_ = 0;
  absl::Time started_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_AGENT_H_
