#include "tests/integration/agent_fixture.h"

#include <signal.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace opmap::testing {

std::string AgentBin() { return BinDir() + "/opmap-agent"; }
std::string DemoBin() { return BinDir() + "/opmap-demo-infer"; }
std::string InjectLib() { return BinDir() + "/../lib/libopmap_inject.so"; }

std::vector<std::string> InjectEnv(const std::string& agent_socket) {
  return {"NVTX_INJECTION64_PATH=" + InjectLib(), "OPMAP_AGENT_SOCKET=" + agent_socket};
}

absl::StatusOr<std::unique_ptr<CollectorProcess>> StartCollectorWithAgentToken(
    const TempDir& dir) {
  CollectorProcess::Options options;
  options.dir = dir.path();
  auto collector = std::make_unique<CollectorProcess>(options);
  if (absl::Status s = collector->Start(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), "\n", collector->Log()));
  }
  WriteFileOrDie(dir.File("agent.token"), std::string(kAgentToken) + "\n");
  return collector;
}

AgentProcess::AgentProcess(std::string dir, std::vector<std::string> extra)
    : dir_(std::move(dir)), extra_(std::move(extra)) {}

absl::Status AgentProcess::StartWith(const std::vector<std::string>& env) {
  ++starts_;
  std::vector<std::string> argv = wrapper_;
  argv.insert(argv.end(), {AgentBin(), "--socket", socket(), "--control-socket",
                           control_socket(), "--spool-dir", dir_ + "/spool", "--agent-id",
                           "test-agent"});
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  const std::string out = absl::StrCat(dir_, "/agent", starts_, ".out");
  if (absl::Status s =
          child_.Start(argv, out, absl::StrCat(dir_, "/agent", starts_, ".err"), env);
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < 200; ++i) {
    if (absl::StrContains(ReadFileOrEmpty(out), "agent ready")) return absl::OkStatus();
    if (!child_.running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError("opmap-agent did not start: " + Log());
}

int AgentProcess::Stop() {
  child_.Signal(SIGTERM);
  return child_.Wait(absl::Seconds(20)).value_or(-1);
}

std::string AgentProcess::StatusJson() const {
  RunResult r = Run({AgentBin(), "status", "--control-socket", control_socket(), "--json"},
                    dir_, {}, absl::Seconds(10));
  return r.exit_code == 0 ? r.out : "";
}

bool AgentProcess::WaitForProcess(pid_t pid, int windows, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string needle = absl::StrFormat("\"pid\":%d,", pid);
  while (absl::Now() < deadline) {
    const std::string status = StatusJson();
    const size_t at = status.find(needle);
    if (at != std::string::npos) {
      const size_t w = status.find("\"windows\":", at);
      if (w != std::string::npos && std::atoi(status.c_str() + w + 10) >= windows) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string AgentProcess::Log() const {
  std::string log;
  for (int i = 1; i <= starts_; ++i) {
    log += ReadFileOrEmpty(absl::StrCat(dir_, "/agent", i, ".err"));
  }
  return log;
}

}  // namespace opmap::testing
