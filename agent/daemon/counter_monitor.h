// One thread that samples CPU counters (agent/counters) for every registered process
// each `interval` — dynolog's "one thread per monitor". Rows are increments over the
// interval, kept per process until the next window's batches take them (bounded: the
// oldest are dropped and counted when no window comes for a long time).
#ifndef OPMAP_AGENT_DAEMON_COUNTER_MONITOR_H_
#define OPMAP_AGENT_DAEMON_COUNTER_MONITOR_H_

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "agent/daemon/window_batches.h"

namespace opmap::agent {

class ProcessCounters;

class CounterMonitor {
 public:
  explicit CounterMonitor(absl::Duration interval, size_t max_rows_per_process = 4096);
  ~CounterMonitor();
  CounterMonitor(const CounterMonitor&) = delete;
  CounterMonitor& operator=(const CounterMonitor&) = delete;

  // `pidfd` and `start_time`: the process's identity from its registration
  // (ProcessIdentity; the pidfd is duplicated, the caller keeps its own): counters are
  // never opened or read on another process that reused the pid.
  void Track(pid_t pid, int pidfd = -1, unsigned long long start_time = 0);
  void Untrack(pid_t pid);

  // Rows sampled since the previous Take for `pid`.
  std::vector<CounterRow> Take(pid_t pid);
  // Counters that cannot be read for `pid`, as (what, reason).
  std::vector<std::pair<std::string, std::string>> Unavailable(pid_t pid);
  // name → (source, scaled per-second rate over the last interval), for status.
  std::map<std::string, std::pair<std::string, double>> Rates(pid_t pid);
  int64_t dropped_rows() const { return dropped_rows_.load(); }

 private:
  struct Tracked;
  void Loop();
  void SampleAll();

  const absl::Duration interval_;
  const size_t max_rows_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<pid_t, std::shared_ptr<Tracked>> tracked_;  // shared: a sample in flight keeps its entry alive
  std::atomic<int64_t> dropped_rows_{0};
  std::thread thread_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_COUNTER_MONITOR_H_
