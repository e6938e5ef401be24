#include "cli/attach_command.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <future>
#include <iostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/daemon/agent.h"
#include "agent/daemon/agent_client.h"
#include "abi/control_messages.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/trace_summary.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/handoff_output.h"
#include "cli/trace_loader.h"

namespace opmap::cli {
namespace {

constexpr char kAttachUsage[] = R"(usage: opmap attach --pid N [--pid M ...] [--duration 10s] [--stalls]
                    [--format table|json] [--control-socket PATH] [--socket PATH]

Captures one window of NVTX ranges (and, on a GPU, kernels and launches) from running
processes that loaded libopmap_inject.so, and prints a local report per process: per
layer type and operator, time share and p50/p95/p99, plus the window's CPU counters
(unavailable ones named with the reason). No collector is needed.

It asks the local opmap-agent (--control-socket) for the window. With no agent running
it does the agent's work itself for this one session: it listens on the library socket
(--socket, else $OPMAP_AGENT_SOCKET, else /run/opmap/agent.sock) and waits up to 35 s
for the process to register (the library retries with backoff up to 30 s).

Each PID gets an explicit outcome line:
  captured        window, records and drops, then the report
  not_registered  the process did not load libopmap_inject.so (the variables to set are
                  printed) or uses another agent socket
  busy            another attach holds the process
  error           what went wrong

options:
  --pid N               a process to capture (repeatable)
  --duration D          window length (default 10s; e.g. 500ms, 2s, 1m)
  --stalls              also sample GPU warp-stall reasons (CUPTI PC sampling; GPU only)
  --format F            table (default) or json (analyze's JSON per process)
  --report F            the handoff packet instead (md, json or html; docs/handoff.md):
                        MFU, stall fractions, bottleneck classes, mapping sheet,
                        mitigations; with --profile FILE, --envelope FILE | --gpu NAME
                        and --output FILE (one --pid) as for `opmap analyze --report`
  --top N               rows per table (default 15)
  --control-socket P    the agent's control socket (default /run/opmap/agent-control.sock)
  --socket P            the library socket when no agent runs (see above)
  -h, --help            this text

exit codes: 0 every PID captured, 1 some PID not captured, 2 bad usage.
)";

struct AttachArgs {
  std::vector<int64_t> pids;
  absl::Duration duration = absl::Seconds(10);
  bool stalls = false;
  bool json = false;
  int top = 15;
  std::string control_socket = agent::AgentConfig{}.control_socket;
  std::string socket;
  HandoffArgs handoff;
};

int AttachUsageError(const std::string& msg) { return UsageFailure("opmap attach", msg); }

const FlagKeys<AttachArgs>& AttachKeys() {
  static const FlagKeys<AttachArgs> keys = [] {
    FlagKeys<AttachArgs> k = {
        {"pid", false, "N", "",
         [](std::string_view v, AttachArgs* a) {
           int64_t pid = 0;
           if (!absl::SimpleAtoi(std::string(v), &pid) || pid <= 0) {
             return absl::InvalidArgumentError("needs a process id");
           }
           a->pids.push_back(pid);
           return absl::OkStatus();
         }},
        {"duration", false, "D", "",
         [](std::string_view v, AttachArgs* a) {
           if (!ParseDurationFlag(std::string(v), &a->duration) ||
               a->duration <= absl::ZeroDuration() || a->duration > absl::Hours(1)) {
             return absl::InvalidArgumentError("needs a duration between 1ms and 1h, e.g. 10s");
           }
           return absl::OkStatus();
         }},
        {"stalls", true, "", "", SwitchField(&AttachArgs::stalls)},
        {"format", false, "F", "",
         [](std::string_view v, AttachArgs* a) {
           if (v != "table" && v != "json") return absl::InvalidArgumentError("is table or json");
           a->json = v == "json";
           return absl::OkStatus();
         }},
        {"top", false, "N", "", IntField(&AttachArgs::top, 0, 1000000)},
        {"control-socket", false, "PATH", "", TextField(&AttachArgs::control_socket)},
        {"socket", false, "PATH", "", TextField(&AttachArgs::socket)},
    };
    AddHandoffKeys(&AttachArgs::handoff, &k);
    return k;
  }();
  return keys;
}

void PrintReport(int64_t pid, const agent::AttachResult& r, const AttachArgs& args) {
  absl::StatusOr<analysis::Trace> trace = LoadTraceBytes(r.capture, {});
  if (!trace.ok()) {
    std::cout << "  the capture could not be read: " << trace.status().message() << "\n";
    return;
  }
  analysis::MappingResult mapping = analysis::MapGpuEvents(*trace);
  analysis::TraceSummary summary = analysis::Summarize(*trace, mapping);
  const std::string source = absl::StrCat("pid ", pid);
  if (args.handoff.report) {
    HandoffArgs handoff = args.handoff;
    handoff.top = args.top;
    (void)WriteHandoff(handoff, source, *trace, mapping, summary);
    return;
  }
  if (args.json) {
    std::cout << analysis::RenderAnalyzeJson(summary, {source, 0}) << "\n";
    return;
  }
  std::cout << analysis::RenderAnalyzeTable(summary, {source, args.top});
  std::cout << "\ncpu counters over the window\n" << r.counters;
}

// The outcome line and, when captured, the report. True when captured.
bool Report(int64_t pid, const agent::AttachResult& r, const AttachArgs& args) {
  if (r.outcome == "captured") {
    std::cerr << absl::StrFormat("pid %d: captured: %s window, %d records, %d drops\n", pid,
                                 absl::FormatDuration(r.window), r.records, r.drops);
    PrintReport(pid, r, args);
    return true;
  }
  std::cerr << absl::StrFormat("pid %d: %s: %s\n", pid, r.outcome, r.message);
  return false;
}

agent::AttachResult FromReply(int64_t pid, const agent::AgentReply& reply) {
  agent::AttachResult r;
  auto field = [&](const char* k) {
    auto it = reply.fields.find(k);
    return it == reply.fields.end() ? std::string() : it->second;
  };
  r.pid = static_cast<pid_t>(pid);
  r.outcome = field("outcome");
  r.message = field("message");
  int64_t ms = 0, len = 0;
  (void)absl::SimpleAtoi(field("window_ms"), &ms);
  (void)absl::SimpleAtoi(field("records"), &r.records);
  (void)absl::SimpleAtoi(field("drops"), &r.drops);
  (void)absl::SimpleAtoi(field("counters_len"), &len);
  r.window = absl::Milliseconds(ms);
  len = std::clamp<int64_t>(len, 0, static_cast<int64_t>(reply.body.size()));
  r.counters = reply.body.substr(0, static_cast<size_t>(len));
  r.capture = reply.body.substr(static_cast<size_t>(len));
  return r;
}

// No agent: this process plays the agent for these PIDs only (no schedule, no upload).
int Standalone(const AttachArgs& args) {
  agent::AgentConfig config;
  const char* env = std::getenv("OPMAP_AGENT_SOCKET");
  config.socket = !args.socket.empty() ? args.socket : (env && *env ? env : ring::kDefaultAgentSocket);
  config.control_socket = absl::StrFormat("/tmp/opmap-attach-%d.sock", getpid());
  std::cerr << "opmap attach: no agent at " << args.control_socket
            << "; capturing directly (library socket " << config.socket << ")\n";
  // A live agent on the library socket (its control socket elsewhere) must not lose its
  // socket to us: refuse rather than take it over.
  if (absl::StatusOr<agent::AgentReply> probe = agent::CallAgent(config.socket, {}, absl::Seconds(2));
      !absl::IsUnavailable(probe.status())) {
    std::cerr << "opmap attach: something is listening on the library socket " << config.socket
              << " (a running agent?) but not on --control-socket " << args.control_socket
              << ": pass the agent's --control-socket\n";
    return 1;
  }
  agent::Agent a(config, [](std::vector<opmap::v1::Batch>) {}, nullptr);
  a.DisableSchedule();
  if (absl::Status s = a.Start(); !s.ok()) {
    std::cerr << "opmap attach: " << s.message() << "\n";
    return 1;
  }
  std::thread runner([&a] { a.Run(); });
  std::vector<std::future<agent::AttachResult>> results;
  for (int64_t pid : args.pids) {
    auto promise = std::make_shared<std::promise<agent::AttachResult>>();
    results.push_back(promise->get_future());
    a.RequestAttach(static_cast<pid_t>(pid), args.duration, args.stalls, absl::Seconds(35),
                    [promise](agent::AttachResult r) { promise->set_value(std::move(r)); });
  }
  bool all = true;
  for (size_t i = 0; i < results.size(); ++i) {
    all = Report(args.pids[i], results[i].get(), args) && all;
  }
  a.Stop();
  runner.join();
  return all ? 0 : 1;
}

}  // namespace

int RunAttach(const std::vector<std::string>& argv) {
  AttachArgs args;
  if (std::optional<int> rc = ParseCommandFlags("opmap attach", argv, AttachKeys(),
                                                config::CommandShape{.config_file = false, .operands = false, .short_names = {}},
                                                kAttachUsage, &args, nullptr)) {
    return *rc;
  }
  if (args.pids.empty()) return AttachUsageError("--pid is required");
  if (std::string e = HandoffFlagsWithoutReport(args.handoff); !e.empty()) return AttachUsageError(e);
  if (!args.handoff.output.empty() && args.pids.size() > 1) {
    return AttachUsageError("--output takes one --pid (each process is its own report)");
  }
  signal(SIGPIPE, SIG_IGN);

  bool all = true;
  for (size_t i = 0; i < args.pids.size(); ++i) {
    agent::ControlRequest request;
    request.kind = agent::ControlRequest::Kind::kAttach;
    request.pid = args.pids[i];
    request.duration = args.duration;
    request.stalls = args.stalls;
    absl::StatusOr<agent::AgentReply> reply =
        agent::CallAgent(args.control_socket, request, args.duration + absl::Seconds(30));
    if (!reply.ok() && absl::IsUnavailable(reply.status()) && i == 0) {
      return Standalone(args);
    }
    if (!reply.ok()) {
      std::cerr << absl::StrFormat("pid %d: error: %s\n", args.pids[i], reply.status().message());
      all = false;
      continue;
    }
    all = Report(args.pids[i], FromReply(args.pids[i], *reply), args) && all;
  }
  return all ? 0 : 1;
}

}  // namespace opmap::cli
