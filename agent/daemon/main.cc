// opmap-agent: `opmap-agent [run] [flags]` (the daemon), `opmap-agent status` and
// `opmap-agent power`.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "agent/daemon/agent.h"
#include "agent/daemon/agent_client.h"
#include "agent/daemon/agent_config.h"
#include "agent/daemon/power_command.h"
#include "agent/daemon/uploader.h"
#include "common/config/flag_config.h"
#include "common/metrics/metrics_server.h"
#include "common/version/version.h"

namespace {

std::atomic<opmap::agent::Agent*> g_agent{nullptr};

void OnSignal(int) {
  if (opmap::agent::Agent* a = g_agent.load()) a->Stop();
}

struct StatusArgs {
  std::string control_socket = opmap::agent::AgentConfig{}.control_socket;
  bool json = false;
};

// `opmap-agent status`'s flags, through the flag table every opmap binary uses.
const std::vector<opmap::config::ConfigKey<StatusArgs>>& StatusKeys() {
  static const auto* keys = new std::vector<opmap::config::ConfigKey<StatusArgs>>{
      {"control-socket", false, "PATH",
       "the agent's control socket (default /run/opmap/agent-control.sock)",
       opmap::config::StringSetter(&StatusArgs::control_socket)},
      {"json", true, "", "one JSON object instead of the table",
       opmap::config::ParsedSetter(&StatusArgs::json, &opmap::config::ParseBool)},
  };
  return *keys;
}

int Status(const std::vector<std::string>& args) {
  StatusArgs parsed;
  opmap::config::CommandShape shape;
  shape.config_file = false;
  absl::StatusOr<bool> help =
      opmap::config::ParseCommandLine(args, StatusKeys(), shape, &parsed, nullptr);
  if (!help.ok()) {
    std::cerr << "opmap-agent status: " << help.status().message()
              << "\nrun `opmap-agent status --help` for usage\n";
    return 2;
  }
  if (*help) {
    std::cout << "usage: opmap-agent status [--control-socket PATH] [--json]\n\n"
                 "Registered processes, their state, windows, records/s and drops; the\n"
                 "agent's own CPU and RSS; the upload queue and spool.\n\n"
              << opmap::config::FlagHelp(StatusKeys(), shape);
    return 0;
  }
  const std::string& socket = parsed.control_socket;
  opmap::agent::ControlRequest request;
  request.json = parsed.json;
  absl::StatusOr<opmap::agent::AgentReply> reply =
      opmap::agent::CallAgent(socket, request, absl::Seconds(10));
  if (!reply.ok()) {
    std::cerr << "opmap-agent status: " << reply.status().message() << "\n";
    return 1;
  }
  if (reply->fields["outcome"] != "status") {
    std::cerr << "opmap-agent status: " << reply->fields["message"] << "\n";
    return 1;
  }
  std::cout << reply->body;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--version" || args[0] == "version")) {
    std::cout << opmap::VersionText("opmap-agent");
    return 0;
  }
  if (!args.empty() && args[0] == "status") return Status({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "power") {
    return opmap::agent::RunPowerCommand({args.begin() + 1, args.end()});
  }
  if (!args.empty() && args[0] == "run") args.erase(args.begin());
  absl::StatusOr<opmap::agent::ParsedAgentArgs> parsed = opmap::agent::ParseAgentArgs(args);
  if (!parsed.ok()) {
    std::cerr << "opmap-agent: " << parsed.status().message() << "\n"
              << "run 'opmap-agent --help' for usage\n";
    return 2;
  }
  if (parsed->help) {
    std::cout << opmap::agent::AgentUsage();
    return 0;
  }
  const opmap::agent::AgentConfig& config = parsed->config;
  absl::StatusOr<std::unique_ptr<opmap::agent::Uploader>> uploader =
      opmap::agent::Uploader::Create(config);
  if (!uploader.ok()) {
    std::cerr << "opmap-agent: " << uploader.status().message() << "\n";
    return 1;
  }
  opmap::agent::Uploader* up = uploader->get();
  opmap::agent::Agent agent(
      config, [up](std::vector<opmap::v1::Batch> b) { up->Push(std::move(b)); },
      [up] { return up->Stats(); });
  if (absl::Status s = agent.Start(); !s.ok()) {
    std::cerr << "opmap-agent: " << s.message() << "\n";
    return 1;
  }
  std::unique_ptr<opmap::metrics::MetricsServer> metrics;
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<opmap::metrics::MetricsServer>> started =
        opmap::metrics::MetricsServer::Start(config.metrics_listen,
                                             [&agent] { return agent.MetricsText(); });
    if (!started.ok()) {
      std::cerr << "opmap-agent: --metrics-listen: " << started.status().message() << "\n";
      return 1;
    }
    metrics = std::move(*started);
    std::cout << "metrics on " << metrics->address() << std::endl;
  }
  g_agent.store(&agent);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::cout << "agent ready: socket " << config.socket << ", control " << config.control_socket
            << std::endl;
  agent.Run();
  if (metrics != nullptr) metrics->Stop();  // before the agent it reads goes
  g_agent.store(nullptr);
  std::cout << "agent stopped" << std::endl;
  return 0;
}
