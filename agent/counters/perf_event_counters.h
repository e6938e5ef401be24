// PerfEventCounters: Linux software counters (task-clock, context switches, CPU
// migrations, page faults, major faults) for one process, opened with raw
// perf_event_open(tid, cpu=-1). They need no PMU, so they work on VMs where PAPI has
// nothing, and they are what the agent falls back to there.
//
// Threads. perf_event_open(pid) counts only the one thread `pid` names, and `inherit`
// extends a counter only to threads (and child processes) created *after* it was opened.
// So Open enumerates /proc/<pid>/task and opens one fd per existing thread per counter,
// each with inherit = 1, re-listing until no new thread shows up, up to max_threads
// threads (fds = counters x threads; stay well under RLIMIT_NOFILE). Read sums each
// counter over its fds; read() on an inherited fd already includes the live and exited
// threads it spawned, and the fd of an exited thread keeps its final count.
// The thread list is taken once, before the first open: listing again afterwards would
// find threads that an already-opened thread spawned, which its inherited counter
// already counts, and count them twice. The cost is the opposite race: a thread spawned
// during Open by a thread not yet opened is never counted. Open takes well under a
// millisecond per thread, so we accept that.
//
// Read format. inherit does not combine with PERF_FORMAT_GROUP (perf_event_open(2)), so
// every counter is its own fd, read on its own, with TOTAL_TIME_ENABLED|RUNNING: one
// read(2) of three u64 per fd. Software counters are never multiplexed, so running ==
// enabled in practice; enabled/running are summed over threads, which keeps Scaled()
// exact when every thread ran the whole time and is a time-weighted estimate otherwise.
// For a per-task counter, "enabled" advances only while the task is on a CPU.
//
// Privilege. Counting kernel-mode work needs perf_event_paranoid < 2 or CAP_PERFMON.
// Without it (EACCES/EPERM) task-clock and the fault counters are reopened user-only and
// named with a ":u" suffix (e.g. "perf::PAGE-FAULTS:u"), because user-only counts differ
// and the output must say so. Context switches and CPU migrations are not: the kernel
// counts them in kernel mode, so user-only they read 0 always; they are listed
// unavailable instead. Other failures go to `unavailable` with errno text and the
// perf_event_paranoid setting.
//
// Thread safety: thread-compatible; Read is const and only read(2)s the fds.
#ifndef OPMAP_AGENT_COUNTERS_PERF_EVENT_COUNTERS_H_
#define OPMAP_AGENT_COUNTERS_PERF_EVENT_COUNTERS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/counters/counter_reading.h"

namespace opmap::agent {

class PerfEventCounters {
 public:
  // NotFound when `pid` does not exist; otherwise the counters that opened (possibly
  // none: then nullptr) with the rest described in `unavailable`.
  static absl::StatusOr<std::unique_ptr<PerfEventCounters>> Open(
      pid_t pid, int max_threads, std::vector<CounterUnavailable>* unavailable);
  ~PerfEventCounters();
  PerfEventCounters(const PerfEventCounters&) = delete;
  PerfEventCounters& operator=(const PerfEventCounters&) = delete;

  // Appends one reading per open counter to `out`.
  absl::Status Read(std::vector<CounterReading>* out) const;

  int threads() const { return static_cast<int>(tids_.size()); }

 private:
  struct Counter {
    std::string name;      // "perf::TASK-CLOCK", with ":u" when user-only
    uint64_t config;       // PERF_COUNT_SW_*
    bool user_only;        // exclude_kernel, decided on the leader
    std::vector<int> fds;  // one per thread in tids_ that was still alive at open
  };
  PerfEventCounters(pid_t pid) : pid_(pid) {}

  pid_t pid_;
  std::vector<pid_t> tids_;  // threads opened, leader first
  std::vector<Counter> counters_;
};

// The kernel.perf_event_paranoid setting as text ("2"), or "unknown" when unreadable.
std::string PerfEventParanoid();

// "Permission denied (errno 13)": strerror text plus the number, thread-safe.
std::string ErrnoText(int err);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_COUNTERS_PERF_EVENT_COUNTERS_H_
