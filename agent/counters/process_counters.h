// ProcessCounters: the CPU counters of one monitored process, from whichever sources
// this host offers. PAPI hardware presets where a PMU exists (fleet hosts), raw
// perf_event software counters always (they need no PMU), each reading tagged with its
// source. Whatever could not be opened is listed in unavailable() with the reason, so a
// missing number is printed as "unavailable: <reason>", never as 0.
//
//   ASSIGN_OR_RETURN(auto counters, ProcessCounters::Open(pid, CounterOptions{}));
//   for (const CounterUnavailable& u : counters->unavailable()) Log(u.what, u.reason);
//   ASSIGN_OR_RETURN(std::vector<CounterReading> now, counters->Read());
//
// Exit: the process is held by a pidfd, so a pid reused by a new process is never
// mistaken for the old one. Once the target has exited (zombie or reaped), Read returns
// NotFound naming the pid; counts after the last successful Read are not reported.
//
// Memory is bounded at Open: counters x threads fds (max_threads caps threads), one
// PAPI event set, and the unavailable list; Read allocates only the vector it returns.
//
// Thread safety: thread-compatible. Distinct objects may be used from distinct threads
// concurrently (PAPI calls are serialized process-wide); one object needs external
// synchronization.
#ifndef OPMAP_AGENT_COUNTERS_PROCESS_COUNTERS_H_
#define OPMAP_AGENT_COUNTERS_PROCESS_COUNTERS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/counters/counter_reading.h"

namespace opmap::agent {

class PapiCounters;
class PerfEventCounters;

struct CounterOptions {
  // PAPI presets to attach. PAPI_MEM_SCY/PAPI_RES_STL/PAPI_TOT_CYC feed the CPU
  // memory-stall fraction (memory_stall.h); more presets mean more multiplexing, and so
  // coarser estimates, on PMUs with few counters.
  std::vector<std::string> papi_presets = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_RES_STL",
                                           "PAPI_MEM_SCY", "PAPI_L3_TCM"};
  bool use_perf_event = true;  // the software counters of perf_event_counters.h
  // Threads opened per process (fds = 5 x threads). Threads beyond are uncounted and
  // the shortfall is listed in unavailable().
  int max_threads = 64;
  // The process's identity as the caller took it while it knew it (at registration,
  // through the connected socket's peer): a pidfd, duplicated here, and the start time.
  // With them a pid reused by another process (another user's) is never counted: Open
  // and Read answer NotFound. -1 / 0: taken at Open, by pid.
  int pidfd = -1;
  unsigned long long start_time = 0;
};

// A process's identity now: a pidfd (-1 where pidfd_open is missing; the caller closes
// it) and its start time from /proc/<pid>/stat (0 when unreadable). Taken while the
// caller knows `pid` is the process it means (a connected socket's peer).
struct ProcessIdentity {
  int pidfd = -1;
  unsigned long long start_time = 0;
};
ProcessIdentity TakeProcessIdentity(pid_t pid);

class ProcessCounters {
 public:
  // NotFound when `pid` does not exist. Otherwise succeeds, even with no counter open.
  static absl::StatusOr<std::unique_ptr<ProcessCounters>> Open(pid_t pid,
                                                               const CounterOptions& options);
  ~ProcessCounters();
  ProcessCounters(const ProcessCounters&) = delete;
  ProcessCounters& operator=(const ProcessCounters&) = delete;

  // Every open counter, one read each, cumulative since Open. NotFound once the
  // process has exited; Internal when a read fails otherwise.
  absl::StatusOr<std::vector<CounterReading>> Read();

  // What was asked for and could not be opened, fixed at Open.
  const std::vector<CounterUnavailable>& unavailable() const { return unavailable_; }
  pid_t pid() const { return pid_; }

 private:
  explicit ProcessCounters(pid_t pid);  // in the .cc, where the members are complete
  absl::Status CheckAlive() const;

  pid_t pid_;
  int pidfd_ = -1;                       // -1 where pidfd_open is missing (Linux < 5.3)
  unsigned long long start_time_ = 0;    // /proc/<pid>/stat starttime, the fallback check
  std::unique_ptr<PapiCounters> papi_;   // null when no preset could be opened
  std::unique_ptr<PerfEventCounters> perf_;  // null when none opened or not asked for
  std::vector<CounterUnavailable> unavailable_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_PROCESS_COUNTERS_H_
