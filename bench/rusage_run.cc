// rusage_run CMD [ARGS...]: runs CMD with stdout sent to /dev/null and prints
// "<wall seconds> <peak RSS KiB> <exit status> <CPU seconds (user + sys)>" on stdout.
//
// Why a runner: on Linux a child's ru_maxrss starts at its parent's RSS at fork time
// (the pre-exec image counts), so measuring from python3 or a shell would put their
// ~14 MB under every figure. This process is tiny when it forks, so what it reports is
// the command's own peak. Used by bench/analyze_bench.py.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rusage_run CMD [ARGS...]\n");
    return 2;
  }
  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("rusage_run: fork");
    return 2;
  }
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1);
    execvp(argv[1], argv + 1);
    std::perror("rusage_run: exec");
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) < 0) {
    std::perror("rusage_run: wait4");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
               usage.ru_stime.tv_usec / 1e6;
  std::printf("%.6f %ld %d %.6f\n", wall, usage.ru_maxrss, code, cpu);
  return 0;
}
