#include "tests/unit/counters/child_process.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace opmap::agent::counters_test {
namespace {

// Spends `ns` of this thread's CPU time (not wall time: the machine may be busy).
void BurnCpu(int64_t ns) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile uint64_t sink = 0;
  do {
    for (int i = 0; i < 10000; ++i) sink = sink * 6364136223846793005ULL + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1'000'000'000LL + (now.tv_nsec - start.tv_nsec) < ns);
}

[[noreturn]] void ChildMain(const Work& work, int from_parent, int to_parent) {
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  auto burner = [&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return go; });
    lock.unlock();
    BurnCpu(work.burn_ns);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < work.threads_before; ++i) threads.emplace_back(burner);
  char c = 'r';
  if (write(to_parent, &c, 1) != 1) _exit(2);   // ready: the threads exist
  if (read(from_parent, &c, 1) != 1) _exit(0);  // go
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  for (int i = 0; i < work.threads_after; ++i) {
    threads.emplace_back([&] { BurnCpu(work.burn_ns); });
  }
  if (work.main_burns) BurnCpu(work.burn_ns);
  for (int i = 0; i < work.sleeps; ++i) usleep(1000);
  if (work.touch_pages > 0) {
    size_t bytes = work.touch_pages * kPageBytes;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(3);
    madvise(p, bytes, MADV_NOHUGEPAGE);  // one fault per 4 KiB page, not per 2 MiB
    for (size_t i = 0; i < bytes; i += kPageBytes) static_cast<volatile char*>(p)[i] = 1;
  }
  for (std::thread& t : threads) t.join();
  c = 'd';
  if (write(to_parent, &c, 1) != 1) _exit(4);   // done
  if (read(from_parent, &c, 1) != 1) _exit(0);  // exit on a byte or on EOF
  _exit(0);
}

}  // namespace

Child::Child(const Work& work) {
  int down[2], up[2];
  if (pipe(down) != 0) return;
  if (pipe(up) != 0) {
    close(down[0]);
    close(down[1]);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    close(down[1]);
    close(up[0]);
    ChildMain(work, down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  to_child_ = down[1];
  from_child_ = up[0];
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    Reap();
  }
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
}

bool Child::WaitFor(char expected) {
  char c = 0;
  return read(from_child_, &c, 1) == 1 && c == expected;
}

bool Child::Send() {
  char c = 'g';
  return write(to_child_, &c, 1) == 1;
}

int Child::Reap() {
  int status = -1;
  waitpid(pid_, &status, 0);
  reaped_ = true;
  return status;
}

bool Child::WaitExited() {
  siginfo_t info{};
  return waitid(P_PID, pid_, &info, WEXITED | WNOWAIT) == 0;
}

ProcStat ReadProcStat(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(in, line);
  ProcStat st;
  size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return st;
  // Fields 3..15 follow the command name; minflt is 10, majflt 12, utime 14, stime 15.
  std::istringstream fields(line.substr(close_paren + 2));
  std::vector<std::string> f(13);
  for (std::string& s : f) fields >> s;
  if (fields.fail()) return st;
  const int64_t tick_ns = 1'000'000'000LL / sysconf(_SC_CLK_TCK);
  st.minflt = std::stoll(f[10 - 3]);
  st.majflt = std::stoll(f[12 - 3]);
  st.cpu_ns = (std::stoll(f[14 - 3]) + std::stoll(f[15 - 3])) * tick_ns;
  return st;
}

}  // namespace opmap::agent::counters_test
