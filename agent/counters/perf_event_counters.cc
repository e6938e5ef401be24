#include "agent/counters/perf_event_counters.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {
namespace {

struct SoftwareEvent {
  const char* name;  // PAPI's perf:: spelling, so the two sources read alike
  uint64_t config;
  // The kernel records the event from kernel code (the scheduler), so a user-only
  // counter of it reads 0 however busy the process is (checked on Linux 6.18: 131
  // context switches counted, 0 with exclude_kernel). Such an event is unavailable
  // rather than opened user-only.
  bool kernel_mode_only;
};
constexpr SoftwareEvent kSoftwareEvents[] = {
    {"perf::TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK, false},
    {"perf::CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES, true},
    {"perf::CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS, true},
    {"perf::PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS, false},
    {"perf::MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
};

// The layout read(2) returns for our read_format.
struct ReadValue {
  uint64_t value;
  uint64_t time_enabled;
  uint64_t time_running;
};

int OpenOne(uint64_t config, pid_t tid, bool user_only) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.inherit = 1;  // threads the target creates from now on (see the header)
  attr.exclude_kernel = user_only ? 1 : 0;
  attr.exclude_hv = user_only ? 1 : 0;
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, tid, /*cpu=*/-1, /*group_fd=*/-1, PERF_FLAG_FD_CLOEXEC));
}

// Thread ids of `pid`, leader first; nullopt when the process does not exist.
std::optional<std::vector<pid_t>> ListThreads(pid_t pid) {
  std::string dir = absl::StrCat("/proc/", pid, "/task");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  std::vector<pid_t> tids = {pid};
  while (dirent* entry = readdir(d)) {
    int tid = 0;
    if (absl::SimpleAtoi(entry->d_name, &tid) && tid != pid) tids.push_back(tid);
  }
  closedir(d);
  return tids;
}

}  // namespace

std::string ErrnoText(int err) {
  char buf[128];
  // GNU strerror_r: returns a pointer to the text (maybe not buf); thread-safe.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return absl::StrCat(text, " (errno ", err, ")");
}

std::string PerfEventParanoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string value;
  if (!(in >> value)) return "unknown";
  return value;
}

absl::StatusOr<std::unique_ptr<PerfEventCounters>> PerfEventCounters::Open(
    pid_t pid, int max_threads, std::vector<CounterUnavailable>* unavailable) {
  std::optional<std::vector<pid_t>> tids = ListThreads(pid);
  if (!tids) return absl::NotFoundError(absl::StrCat("pid ", pid, ": no such process"));
  std::unique_ptr<PerfEventCounters> counters(new PerfEventCounters(pid));

  // The leader decides each counter's mode (full or user-only) and whether it is
  // available at all; the other threads follow in the same mode.
  for (const SoftwareEvent& event : kSoftwareEvents) {
    bool user = false;
    int fd = OpenOne(event.config, pid, user);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
      if (event.kernel_mode_only) {
        const int err = errno;  // before PerfEventParanoid() can change it
        unavailable->push_back(
            {event.name,
             absl::StrCat("perf_event_open(pid ", pid, "): ", ErrnoText(err),
                          "; kernel.perf_event_paranoid=", PerfEventParanoid(),
                          "; needs kernel-mode counting (root, CAP_PERFMON or paranoid <= 1): "
                          "a user-only count of this event is always 0")});
        continue;
      }
      user = true;
      fd = OpenOne(event.config, pid, user);
    }
    if (fd < 0) {
      int err = errno;
      if (err == ESRCH) return absl::NotFoundError(absl::StrCat("pid ", pid, " exited"));
      unavailable->push_back(
          {event.name, absl::StrCat("perf_event_open(pid ", pid, "): ", ErrnoText(err),
                                    "; kernel.perf_event_paranoid=", PerfEventParanoid())});
      continue;
    }
    counters->counters_.push_back(
        {absl::StrCat(event.name, user ? ":u" : ""), event.config, user, {fd}});
  }
  if (counters->counters_.empty()) return nullptr;
  counters->tids_.push_back(pid);

  // Any failure on a non-leader thread other than ESRCH (EMFILE, ENOMEM) is about the
  // agent, not the thread, so stop adding threads rather than log it once per thread.
  const size_t limit = static_cast<size_t>(max_threads < 1 ? 1 : max_threads);
  std::string stopped;
  for (size_t t = 1; t < tids->size() && counters->tids_.size() < limit && stopped.empty();
       ++t) {
    const pid_t tid = (*tids)[t];
    bool opened_any = false;
    for (Counter& counter : counters->counters_) {
      int fd = OpenOne(counter.config, tid, counter.user_only);
      if (fd < 0) {
        int err = errno;
        if (err != ESRCH) {  // ESRCH: the thread exited since we listed it
          stopped = absl::StrCat("perf_event_open(tid ", tid, " of pid ", pid, ", ",
                                 counter.name, "): ", ErrnoText(err));
        }
        break;
      }
      counter.fds.push_back(fd);
      opened_any = true;
    }
    if (opened_any) counters->tids_.push_back(tid);
  }
  if (!stopped.empty() || tids->size() > limit) {
    unavailable->push_back(
        {"perf::* (threads)",
         absl::StrCat("pid ", pid, " has ", tids->size(), " threads; counting ",
                      counters->tids_.size(), " of them and the threads they spawn (",
                      stopped.empty() ? absl::StrCat("max_threads=", limit) : stopped,
                      "); counts are partial")});
  }
  return counters;
}

PerfEventCounters::~PerfEventCounters() {
  for (const Counter& counter : counters_) {
    for (int fd : counter.fds) close(fd);
  }
}

absl::Status PerfEventCounters::Read(std::vector<CounterReading>* out) const {
  for (const Counter& counter : counters_) {
    CounterReading reading{counter.name, CounterSource::kPerfEvent, 0, 0, 0};
    for (int fd : counter.fds) {
      ReadValue v;
      ssize_t n;
      do {
        n = read(fd, &v, sizeof(v));
      } while (n < 0 && errno == EINTR);
      if (n != static_cast<ssize_t>(sizeof(v))) {
        return absl::InternalError(absl::StrCat(
            "read ", counter.name, " of pid ", pid_, ": ",
            n < 0 ? ErrnoText(errno) : absl::StrCat("short read of ", n, " bytes")));
      }
      reading.value += static_cast<int64_t>(v.value);
      reading.time_enabled_ns += static_cast<int64_t>(v.time_enabled);
      reading.time_running_ns += static_cast<int64_t>(v.time_running);
    }
    out->push_back(std::move(reading));
  }
  return absl::OkStatus();
}

}  // namespace opmap::agent
