#include "agent/counters/process_counters.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "agent/counters/papi_counters.h"
#include "agent/counters/perf_event_counters.h"

namespace opmap::agent {
namespace {

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture
#endif

// State and start time (clock ticks since boot) from /proc/<pid>/stat. The start time
// tells a reused pid from the original; state 'Z'/'X' means exited but not reaped.
bool ReadStat(pid_t pid, char* state, unsigned long long* start_time) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return false;
  // comm (field 2) may hold spaces and parentheses; fields resume after the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 2));
  fields >> *state;  // field 3
  std::string skip;
  for (int field = 4; field < 22; ++field) fields >> skip;
  fields >> *start_time;  // field 22
  return !fields.fail();
}

}  // namespace

ProcessIdentity TakeProcessIdentity(pid_t pid) {
  ProcessIdentity id;
  if (pid <= 0) return id;
  id.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  char state = 0;
  if (!ReadStat(pid, &state, &id.start_time)) id.start_time = 0;
  return id;
}

absl::StatusOr<std::unique_ptr<ProcessCounters>> ProcessCounters::Open(
    pid_t pid, const CounterOptions& options) {
  if (pid <= 0) return absl::InvalidArgumentError(absl::StrCat("pid ", pid, " is not a process"));
  std::unique_ptr<ProcessCounters> counters(new ProcessCounters(pid));
  // Hold the process before opening anything, so every later check is about this
  // process and not a successor that reused its pid.
  counters->pidfd_ = options.pidfd >= 0
                         ? fcntl(options.pidfd, F_DUPFD_CLOEXEC, 0)
                         : static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (counters->pidfd_ < 0 && options.start_time != 0) {
    counters->start_time_ = options.start_time;
  } else if (counters->pidfd_ < 0) {
    if (errno == ESRCH) return absl::NotFoundError(absl::StrCat("pid ", pid, ": no such process"));
    char state = 0;
    if (!ReadStat(pid, &state, &counters->start_time_)) {
      return absl::NotFoundError(absl::StrCat("pid ", pid, ": no such process"));
    }
  }
  RETURN_IF_ERROR(counters->CheckAlive());

  counters->papi_ = PapiCounters::Open(pid, options.papi_presets, &counters->unavailable_);
  if (options.use_perf_event) {
    ASSIGN_OR_RETURN(counters->perf_, PerfEventCounters::Open(pid, options.max_threads,
                                                              &counters->unavailable_));
  }
  return counters;
}

ProcessCounters::ProcessCounters(pid_t pid) : pid_(pid) {}

ProcessCounters::~ProcessCounters() {
  if (pidfd_ >= 0) close(pidfd_);
}

absl::Status ProcessCounters::CheckAlive() const {
  const std::string exited = absl::StrCat("pid ", pid_, " has exited; its counters are closed");
  if (pidfd_ >= 0) {
    // A pidfd polls readable once the process has exited, zombie or reaped.
    pollfd p{pidfd_, POLLIN, 0};
    int n;
    do {
      n = poll(&p, 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return absl::InternalError(absl::StrCat("poll pidfd of pid ", pid_, ": ",
                                                       ErrnoText(errno)));
    if (n > 0) return absl::NotFoundError(exited);
    return absl::OkStatus();
  }
  char state = 0;
  unsigned long long start_time = 0;
  if (!ReadStat(pid_, &state, &start_time) || start_time != start_time_ || state == 'Z' ||
      state == 'X') {
    return absl::NotFoundError(exited);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CounterReading>> ProcessCounters::Read() {
  // Checked first: counters of an exited process still read (their final counts), and
  // the caller must learn that the process is gone rather than see a flat line.
  RETURN_IF_ERROR(CheckAlive());
  std::vector<CounterReading> readings;
  absl::Status status = absl::OkStatus();
  if (papi_ != nullptr) status = papi_->Read(&readings);
  if (status.ok() && perf_ != nullptr) status = perf_->Read(&readings);
  if (!status.ok()) {
    // The process may have exited between the check and the read; say that if so.
    RETURN_IF_ERROR(CheckAlive());
    return status;
  }
  return readings;
}

}  // namespace opmap::agent
