// Test helpers for opmap-agent integration tests: the real agent binary on private
// sockets, the real demo workload with libopmap_inject.so, and `opmap-agent status`
// parsed back. Builds on collector_fixture.h (temp dirs, child processes, the collector).
#ifndef OPMAP_TESTS_INTEGRATION_AGENT_FIXTURE_H_
#define OPMAP_TESTS_INTEGRATION_AGENT_FIXTURE_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/integration/collector_fixture.h"

namespace opmap::testing {

std::string AgentBin();      // BinDir()/opmap-agent
std::string DemoBin();       // BinDir()/opmap-demo-infer
std::string InjectLib();     // BinDir()/../lib/libopmap_inject.so

class AgentProcess {
 public:
  // Sockets and spool live in `dir`; `extra` flags are appended.
  AgentProcess(std::string dir, std::vector<std::string> extra = {});
  absl::Status Start() { return StartWith({}); }  // waits for "agent ready"
  // The same with `env` ("NAME=value") added to the agent's environment.
  absl::Status StartWith(const std::vector<std::string>& env);
  // Runs the agent as the last arguments of `wrapper` (which must exec them, so the
  // agent's pid is the child's), e.g. to give it a private mount namespace.
  void set_wrapper(std::vector<std::string> wrapper) { wrapper_ = std::move(wrapper); }
  void Kill() {
    child_.Signal(SIGKILL);
    child_.Wait(absl::Seconds(10));
  }
  int Stop();            // SIGTERM, returns the exit code
  std::string socket() const { return dir_ + "/agent.sock"; }
  std::string control_socket() const { return dir_ + "/control.sock"; }
  // `opmap-agent status --json`; "" when the agent does not answer.
  std::string StatusJson() const;
  // Waits until status lists `pid` with at least `windows` finished windows.
  bool WaitForProcess(pid_t pid, int windows, absl::Duration timeout) const;
  std::string Log() const;
  pid_t pid() const { return child_.pid(); }

 private:
  std::string dir_;
  std::vector<std::string> extra_;
  std::vector<std::string> wrapper_;
  Child child_;
  int starts_ = 0;
};

// A collector on SQLite in `dir` (127.0.0.1:0) and `dir`/agent.token holding kAgentToken:
// what a test that runs the real agent against a real collector starts from. The error
// carries the collector's log.
absl::StatusOr<std::unique_ptr<CollectorProcess>> StartCollectorWithAgentToken(
    const TempDir& dir);

// The environment that makes the demo register with `agent_socket`.
std::vector<std::string> InjectEnv(const std::string& agent_socket);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_INTEGRATION_AGENT_FIXTURE_H_
