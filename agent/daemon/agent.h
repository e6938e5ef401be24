// opmap-agent's supervisor: one thread that owns every registered process — accepts
// libraries on the registration socket, opens and closes capture windows on the duty
// cycle (or at once for `opmap attach`), drains rings while a window is open, turns each
// finished window into batches for the uploader, answers the control socket, notices
// exits, and keeps the agent's own CPU under its budget by shrinking windows. Counters
// (counter_monitor.h) and the upload (uploader.h) run on their own threads.
//
// The target process comes first: the agent never blocks a library (the ring drops and
// counts when the agent is slow), and everything the agent itself discards is counted
// in the batches it sends and in `status`.
#ifndef OPMAP_AGENT_DAEMON_AGENT_H_
#define OPMAP_AGENT_DAEMON_AGENT_H_

#include <sys/types.h>

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
#include "agent/capture/unix_socket.h"
#include "agent/daemon/agent_config.h"
#include "agent/daemon/window_policy.h"
#include "agent/daemon/window_batches.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

class CounterMonitor;
struct RegisteredProcess;
struct ControlClient;

// Where finished windows go (the uploader's outbox). Must not block for long.
using BatchSink = std::function<void(std::vector<opmap::v1::Batch>)>;

// What the agent's own upload path reports for `status`.
struct UploadStats {
  int64_t queued_batches = 0;   // unacked, memory and spool together
  int64_t memory_batches = 0;   // of those, not yet on disk (lost to a SIGKILL)
  int64_t spool_bytes = 0;
  int64_t sent_batches = 0;
  int64_t acked_batches = 0;
  int64_t dropped_batches = 0;
  std::string collector_state;  // "connected", "reconnecting: <why>", "none configured"
};

// The outcome of one `opmap attach` (DESIGN.md: an explicit outcome per PID).
struct AttachResult {
  std::string outcome;  // "captured", "not_registered", "busy", "error"
  std::string message;
  pid_t pid = 0;
  absl::Duration window;
  int64_t records = 0;
  int64_t drops = 0;
  std::string capture;  // capture-file bytes (agent/capture/capture_file.h) when captured
  std::string counters;  // the window's CPU counters as a small table, unavailable ones named
};

inline AttachResult AttachOutcome(std::string outcome, pid_t pid, std::string message) {
  AttachResult r;
  r.outcome = std::move(outcome);
  r.pid = pid;
  r.message = std::move(message);
  return r;
}

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

  // Opens a window of `duration` on `pid` as soon as it is registered and no other attach
  // holds it (a scheduled window is let finish first); waits up to `registration_wait`
  // for the library to register. `done` runs once, on the supervisor thread or a
  // responder thread: it must not call back into the agent.
  void RequestAttach(pid_t pid, absl::Duration duration, bool stalls,
                     absl::Duration registration_wait, std::function<void(AttachResult)> done);

 private:
  void Tick(absl::Time now);
  void AcceptLibraries();
  // The blocking part of a registration (hello, ring fd, /proc facts), on a handshake
  // thread: nullptr when the peer was refused (logged).
  std::unique_ptr<RegisteredProcess> Handshake(int fd, ucred cred);
  // Supervisor: joins finished handshake threads (all of them when `wait`) and installs
  // the registrations they completed.
  void InstallRegistrations(bool wait);
  void AcceptControl();
  void ServeControl(ControlClient client);
  void ReadChannel(RegisteredProcess& p, absl::Time now);
  void StartWindow(RegisteredProcess& p, absl::Duration duration, bool stalls, absl::Time now);
  // Hands what the ring holds to the window's converter: at most 2^18 records per tick,
  // everything it holds when `final` (the window is ending).
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
  int library_fd_ = -1;
  int control_fd_ = -1;
  std::atomic<bool> stop_{false};
  bool schedule_enabled_ = true;
  absl::BitGen rng_;

  // Registrations (and control requests) in progress, each on its own thread, so that a
  // slow or hostile peer (one byte, then silence) never holds the supervisor; at most
  // kMaxHandshakes registrations and as many control requests at once, more are refused
  // at accept (registrations counted). Threads are joined by the supervisor only.
  static constexpr int kMaxHandshakes = 8;
  struct HandshakeThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
    bool registration = true;  // else a control request
  };
  int InFlight(bool registration) const;
  std::vector<HandshakeThread> handshakes_;
  std::mutex registered_mu_;
  std::vector<std::unique_ptr<RegisteredProcess>> registered_;  // guarded by registered_mu_
  std::atomic<int64_t> registrations_refused_busy_{0};

  std::mutex mu_;  // guards processes_ and the stats StatusText reads
  std::map<pid_t, std::unique_ptr<RegisteredProcess>> processes_;
  std::vector<std::string> exited_;  // recent exits, for status
  std::unique_ptr<CounterMonitor> counters_;
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
