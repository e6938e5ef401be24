// Test helper: a forked child that does a known amount of work (CPU burn on some
// threads, page touches, sleeps) when told to, so counter tests can compare what they
// counted with what the child did and with what the kernel says it used.
//
//   Child child(work);            // forks; the child spawns threads_before threads
//   child.WaitFor('r');           // ready: open counters now
//   child.Send();                 // go
//   child.WaitFor('d');           // done; the child stays alive until the next Send()
#ifndef OPMAP_TESTS_UNIT_COUNTERS_CHILD_PROCESS_H_
#define OPMAP_TESTS_UNIT_COUNTERS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace opmap::agent::counters_test {

constexpr size_t kPageBytes = 4096;

struct Work {
  int64_t burn_ns = 0;     // CPU each burning thread spends after "go"
  int threads_before = 0;  // burning threads spawned before "ready"
  int threads_after = 0;   // burning threads spawned after "go" (inherited counters)
  bool main_burns = true;  // whether the main thread burns too
  size_t touch_pages = 0;  // 4 KiB pages faulted in after "go" (huge pages off)
  int sleeps = 0;          // 1 ms sleeps after "go", one context switch each
};

// A forked child driven over two pipes. Killed (if needed) and reaped on destruction.
class Child {
 public:
  explicit Child(const Work& work);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool WaitFor(char expected);  // 'r' ready, 'd' done
  bool Send();                  // go; after 'd', exit
  int Reap();                   // waitpid status
  bool WaitExited();            // until a zombie (exited, not reaped)

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
};

// What the kernel accounts for a whole process (all threads) in /proc/<pid>/stat.
struct ProcStat {
  int64_t cpu_ns = 0;  // utime + stime, clock-tick resolution
  int64_t minflt = 0;
  int64_t majflt = 0;
};
ProcStat ReadProcStat(pid_t pid);

}  // namespace opmap::agent::counters_test

#endif  // OPMAP_TESTS_UNIT_COUNTERS_CHILD_PROCESS_H_
