#include "agent/daemon/agent_config.h"

#include <charconv>

#include "absl/strings/str_format.h"
#include "common/config/flag_config.h"
#include "common/text/text_util.h"

namespace opmap::agent {
namespace {

using Key = config::ConfigKey<AgentConfig>;
using config::ParsedSetter;
using config::StringSetter;

absl::StatusOr<double> ParseFraction(std::string_view v) {
  double x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || !(x >= 0) || x > 64) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a number in [0, 64]", v));
  }
  return x;
}

const std::vector<Key>& Keys() {
  static const std::vector<Key>* keys = new std::vector<Key>{
      {"socket", false, "PATH", "where libopmap_inject registers (default /run/opmap/agent.sock)",
       StringSetter(&AgentConfig::socket)},
      {"control-socket", false, "PATH",
       "where `opmap attach` and `opmap-agent status` connect (default "
       "/run/opmap/agent-control.sock)",
       StringSetter(&AgentConfig::control_socket)},
      {"collector", false, "HOST:PORT[,...]", "collector address(es); empty = spool only",
       StringSetter(&AgentConfig::collector, /*allow_empty=*/true)},
      {"metrics-listen", false, "HOST:PORT",
       "serve Prometheus /metrics here (e.g. 127.0.0.1:9465; default: off)",
       StringSetter(&AgentConfig::metrics_listen, /*allow_empty=*/true)},
      {"token-file", false, "FILE", "agent token for the collector (first line of FILE)",
       StringSetter(&AgentConfig::token_file)},
      {"tls-ca", false, "FILE", "CA (PEM) that signed the collector's certificate: enables TLS",
       StringSetter(&AgentConfig::tls_ca)},
      {"tls-cert", false, "FILE", "client certificate (PEM) for mTLS, with --tls-key",
       StringSetter(&AgentConfig::tls_cert)},
      {"tls-key", false, "FILE", "client private key (PEM)", StringSetter(&AgentConfig::tls_key)},
      {"insecure", true, "", "plaintext to the collector (loopback and tests only)",
       ParsedSetter(&AgentConfig::insecure, &config::ParseBool)},
      {"spool-dir", false, "DIR", "unacknowledged batches on disk (default /var/lib/opmap/spool)",
       StringSetter(&AgentConfig::spool_dir)},
      {"spool-size", false, "SIZE", "disk spool cap; oldest dropped (counted) past it (default 1GiB)",
       ParsedSetter(&AgentConfig::spool_bytes, &config::ParseBytes)},
      {"memory-queue", false, "SIZE", "batches held in memory before spilling to the spool (default 8MiB)",
       ParsedSetter(&AgentConfig::memory_queue_bytes, &config::ParseBytes)},
      {"counter-interval", false, "DURATION", "counter sampling interval (default 1s)",
       ParsedSetter(&AgentConfig::counter_interval, &config::ParseDuration)},
      {"power-interval", false, "DURATION",
       "GPU (NVML) and CPU (RAPL) power read interval; 0 = no power reads (default 500ms)",
       ParsedSetter(&AgentConfig::power_interval, &config::ParseDurationOrZero)},
      {"nvml-library", false, "LIB", "NVML to dlopen (default libnvidia-ml.so.1)",
       StringSetter(&AgentConfig::nvml_library)},
      {"powercap-root", false, "DIR", "the powercap tree for RAPL (default /sys/class/powercap)",
       StringSetter(&AgentConfig::powercap_root)},
      {"capture-window", false, "DURATION", "capture window length (default 2s)",
       ParsedSetter(&AgentConfig::capture_window, &config::ParseDuration)},
      {"capture-every", false, "DURATION", "one window per process this often (default 60s)",
       ParsedSetter(&AgentConfig::capture_every, &config::ParseDuration)},
      {"capture-jitter", false, "FRACTION", "± jitter on capture-every (default 0.2)",
       ParsedSetter(&AgentConfig::capture_jitter, &ParseFraction)},
      {"max-concurrent-captures", false, "N", "processes capturing at once (default 2)",
       ParsedSetter(&AgentConfig::max_concurrent_captures, &config::ParsePositive)},
      {"stalls", true, "", "PC-sampling stall reasons in scheduled windows (GPU only)",
       ParsedSetter(&AgentConfig::stalls, &config::ParseBool)},
      {"cpu-budget", false, "CORES", "the agent's own CPU, averaged (default 0.01 = 1%)",
       ParsedSetter(&AgentConfig::cpu_budget, &ParseFraction)},
      {"memory-budget", false, "SIZE",
       "raw record bytes an attach window may hold for its capture; past it records are "
       "dropped and counted (default 256MiB)",
       ParsedSetter(&AgentConfig::memory_budget_bytes, &config::ParseBytes)},
      {"chunk-records", false, "N",
       "records converted and queued for upload at a time while a window is open, so a "
       "window is never held whole (default 20000)",
       ParsedSetter(&AgentConfig::chunk_records, &config::ParsePositive)},
      {"agent-id", false, "ID", "stable id of this host (default: /etc/machine-id)",
       StringSetter(&AgentConfig::agent_id)},
  };
  return *keys;
}

}  // namespace

absl::Status ValidateAgentConfig(const AgentConfig& c) {
  for (std::string_view address : text::Lines(c.collector, ',')) {
    if (c.collector.empty()) break;
    std::string host;
    int port = 0;
    if (absl::Status s = config::SplitHostPort(text::Trim(address), &host, &port); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("--collector: %s", s.message()));
    }
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  if (c.insecure && !c.tls_ca.empty()) {
    return absl::InvalidArgumentError("--insecure and --tls-ca exclude each other");
  }
  if (!c.collector.empty() && !c.insecure && c.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "--collector needs --tls-ca FILE (TLS) or, on loopback only, --insecure");
  }
  if (c.capture_window >= c.capture_every) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--capture-window (%s) must be shorter than --capture-every (%s)",
        absl::FormatDuration(c.capture_window), absl::FormatDuration(c.capture_every)));
  }
  if (c.capture_jitter >= 1) {
    return absl::InvalidArgumentError("--capture-jitter must be below 1");
  }
  if (c.socket == c.control_socket) {
    return absl::InvalidArgumentError("--socket and --control-socket must differ");
  }
  return absl::OkStatus();
}

absl::StatusOr<ParsedAgentArgs> ParseAgentArgs(const std::vector<std::string>& args) {
  ParsedAgentArgs out;
  absl::StatusOr<bool> help =
      config::ParseArgsInto(args, Keys(), &out.config, &out.config.config_file);
  // Errors quote the values they refuse: never a password from a store URL.
  if (!help.ok()) return config::Redacted(help.status());
  out.help = *help;
  if (out.help) return out;
  if (absl::Status s = ValidateAgentConfig(out.config); !s.ok()) return config::Redacted(s);
  return out;
}

std::string AgentUsage() {
  std::string out =
      "usage: opmap-agent [run] [--config FILE] [flags]\n"
      "       opmap-agent status [--control-socket PATH] [--json]\n"
      "       opmap-agent power [--duration 1s] [--json] (this host's GPU power and RAPL)\n"
      "       opmap-agent --version\n"
      "\n"
      "The per-host daemon: processes that loaded libopmap_inject.so register on --socket;\n"
      "the agent samples their CPU counters, opens capture windows on a duty cycle, turns\n"
      "what the library recorded into batches and streams them to the collector, spooling\n"
      "to disk whatever is not acknowledged yet. `opmap attach --pid N` asks it for a\n"
      "window now. A config file holds `key = value` lines with the keys below.\n"
      "\n"
      "flags:\n";
  out += config::FlagHelp(Keys());
  out +=
      "\n"
      "On start it prints `agent ready: socket PATH, control PATH` to stdout.\n"
      "SIGTERM/SIGINT: ends open windows, detaches every library, flushes the spool, exits 0.\n"
      "Exit codes: 0 ok, 1 runtime error, 2 bad flags or config.\n";
  return out;
}

}  // namespace opmap::agent
