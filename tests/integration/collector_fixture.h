// Test helpers for integration tests against the real `opmap-collector` binary: a temp
// directory, child processes with captured output, and a collector process that can be
// started on 127.0.0.1, SIGKILLed and restarted on the same port and database.
// Binaries come from OPMAP_BIN_DIR (compile-time default; the env var overrides).
#ifndef OPMAP_TESTS_INTEGRATION_COLLECTOR_FIXTURE_H_
#define OPMAP_TESTS_INTEGRATION_COLLECTOR_FIXTURE_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace opmap::testing {

std::string BinDir();
std::string OpmapBin();      // BinDir()/opmap
std::string CollectorBin();  // BinDir()/opmap-collector

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at destruction
// unless OPMAP_KEEP_TEST_DIRS is set.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFileOrDie(const std::string& path, const std::string& data, int mode = 0600);
std::string ReadFileOrEmpty(const std::string& path);

// A child process; stdout and stderr go to files. The environment is the test's, minus
// OPMAP_TOKEN, plus `env` ("K=V" entries).
class Child {
 public:
  Child() = default;
  ~Child();  // SIGKILLs and reaps a child still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  absl::Status Start(const std::vector<std::string>& argv, const std::string& stdout_path,
                     const std::string& stderr_path, const std::vector<std::string>& env = {});
  bool running();
  // Waits for the exit; returns the exit code, 128+signal when killed, or nullopt on
  // timeout (the child keeps running).
  std::optional<int> Wait(absl::Duration timeout);
  void Signal(int sig);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

struct RunResult {
  int exit_code = -1;  // 128+signal when killed; -1 on timeout
  std::string out, err;
};

// Runs argv to completion (at most `timeout`); output captured in `dir`.
RunResult Run(const std::vector<std::string>& argv, const std::string& dir,
              const std::vector<std::string>& env = {},
              absl::Duration timeout = absl::Seconds(120));

// Token file contents used by the tests: one token per role.
inline constexpr char kAgentToken[] = "agent-token-0123456789abcdef";
inline constexpr char kAnalystToken[] = "analyst-token-0123456789abcdef";
inline constexpr char kAdminToken[] = "admin-token-0123456789abcdef";

class CollectorProcess {
 public:
  struct Options {
    std::string dir;                  // where the DB, tokens file and logs go
    std::string db;                   // default dir/collector.db
    std::string listen = "127.0.0.1:0";
    std::vector<std::string> extra;   // e.g. --tls-cert ...
    std::string store;                // a full --store URL instead (e.g. clickhouse://...)
    // Runs the collector as the last arguments of `wrapper`, which must exec them (so the
    // collector keeps the child's pid), e.g. {"nsenter", "-t", PID, "-m", "--"}.
    std::vector<std::string> wrapper;
  };

  explicit CollectorProcess(Options options);
  ~CollectorProcess();

  // Starts the binary and waits (up to 20 s) for "listening on HOST:PORT" on its stdout.
  absl::Status Start();
  // SIGKILL and reap.
  void Kill();
  // SIGTERM and wait for a clean exit; returns its code.
  int Stop();
  // Starts again on the same database and the same port as the last start.
  absl::Status Restart();

  const std::string& address() const { return address_; }  // 127.0.0.1:PORT
  pid_t pid() const { return child_.pid(); }
  int port() const { return port_; }
  const std::string& metrics_address() const { return metrics_address_; }
  std::string tokens_file() const { return options_.dir + "/tokens"; }
  const std::string& db() const { return options_.db; }
  // Everything the collector wrote on stderr, all starts together.
  std::string Log() const;
  // A counter from GET /metrics (e.g. "opmap_collector_batches_total"); -1 when the
  // endpoint or the metric is missing.
  int64_t Metric(const std::string& name) const;  // MetricValue, truncated
  double MetricValue(const std::string& name) const;  // -1: not exposed

 private:
  absl::Status StartWith(const std::string& listen);

  Options options_;
  Child child_;
  int starts_ = 0;
  std::string address_, metrics_address_;
  int port_ = 0;
};

// GET http://ADDRESS/PATH over loopback; "" on any failure.
std::string HttpGet(const std::string& address, const std::string& path);

// Peak resident set (VmHWM) of `pid` in MiB; -1 when unreadable.
double PeakRssMiB(pid_t pid);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_INTEGRATION_COLLECTOR_FIXTURE_H_
