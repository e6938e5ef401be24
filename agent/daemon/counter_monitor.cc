#include "agent/daemon/counter_monitor.h"

#include <time.h>

#include "agent/counters/counter_reading.h"
#include "agent/counters/process_counters.h"
#include "common/base/wall_clock.h"

namespace opmap::agent {

struct CounterMonitor::Tracked {
  std::unique_ptr<ProcessCounters> counters;  // null when Open failed
  std::vector<std::pair<std::string, std::string>> unavailable;
  std::map<std::string, CounterReading> last;  // cumulative, to make increments
  std::vector<CounterRow> rows;
  std::map<std::string, std::pair<std::string, double>> rates;
  bool gone = false;
};

namespace {

using base::RealtimeNs;

opmap::v1::CounterSource WireSource(CounterSource s) {
  return s == CounterSource::kPapi ? opmap::v1::COUNTER_SOURCE_PAPI
                                   : opmap::v1::COUNTER_SOURCE_PERF_EVENT;
}

}  // namespace

CounterMonitor::CounterMonitor(absl::Duration interval, size_t max_rows_per_process)
    : interval_(interval), max_rows_(max_rows_per_process), thread_([this] { Loop(); }) {}

CounterMonitor::~CounterMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CounterMonitor::Track(pid_t pid, int pidfd, unsigned long long start_time) {
  auto t = std::make_shared<Tracked>();
  CounterOptions options;
  options.pidfd = pidfd;
  options.start_time = start_time;
  absl::StatusOr<std::unique_ptr<ProcessCounters>> opened = ProcessCounters::Open(pid, options);
  if (opened.ok()) {
    t->counters = std::move(*opened);
    for (const CounterUnavailable& u : t->counters->unavailable()) {
      t->unavailable.emplace_back("counter " + u.what, u.reason);
    }
  } else {
    t->unavailable.emplace_back("counters", std::string(opened.status().message()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  tracked_[pid] = std::move(t);
}

void CounterMonitor::Untrack(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  tracked_.erase(pid);
}

std::vector<CounterRow> CounterMonitor::Take(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tracked_.find(pid);
  if (it == tracked_.end()) return {};
  return std::exchange(it->second->rows, {});
}

std::vector<std::pair<std::string, std::string>> CounterMonitor::Unavailable(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tracked_.find(pid);
  if (it == tracked_.end()) return {};
  return it->second->unavailable;
}

std::map<std::string, std::pair<std::string, double>> CounterMonitor::Rates(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tracked_.find(pid);
  if (it == tracked_.end()) return {};
  return it->second->rates;
}

void CounterMonitor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, absl::ToChronoNanoseconds(interval_), [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    SampleAll();
    lock.lock();
  }
}

void CounterMonitor::SampleAll() {
  // Reads happen outside the lock (a read is a syscall per fd); Track/Untrack only swap
  // map entries, and an entry read here stays alive through the shared snapshot.
  std::vector<std::pair<pid_t, std::shared_ptr<Tracked>>> snapshot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [pid, t] : tracked_) {
      if (t->counters != nullptr && !t->gone) snapshot.emplace_back(pid, t);
    }
  }
  for (auto& [pid, t] : snapshot) {
    absl::StatusOr<std::vector<CounterReading>> now = t->counters->Read();
    const int64_t ts = RealtimeNs();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tracked_.find(pid);
    if (it == tracked_.end() || it->second != t) continue;  // untracked meanwhile
    if (!now.ok()) {
      t->gone = true;
      continue;
    }
    for (const CounterReading& r : *now) {
      CounterReading prev{};
      if (auto p = t->last.find(r.name); p != t->last.end()) prev = p->second;
      CounterRow row;
      row.name = r.name;
      row.source = WireSource(r.source);
      row.ts_ns = ts;
      row.value = r.value - prev.value;
      row.time_enabled_ns = r.time_enabled_ns - prev.time_enabled_ns;
      row.time_running_ns = r.time_running_ns - prev.time_running_ns;
      t->last[r.name] = r;
      // The interval's reading, scaled for multiplexing the one way (counter_reading.h).
      const CounterReading interval{r.name, r.source, row.value, row.time_enabled_ns,
                                    row.time_running_ns};
      if (absl::StatusOr<double> scaled = Scaled(interval);
          scaled.ok() && row.time_enabled_ns > 0) {
        t->rates[r.name] = {std::string(CounterSourceName(r.source)),
                            *scaled * 1e9 / static_cast<double>(row.time_enabled_ns)};
      }
      if (t->rows.size() >= max_rows_) {
        t->rows.erase(t->rows.begin());
        dropped_rows_.fetch_add(1);
      }
      t->rows.push_back(std::move(row));
    }
  }
}

}  // namespace opmap::agent
