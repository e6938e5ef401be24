// opmap-agent's settings: flags plus an optional `key = value` config file with the same
// keys (common/config/flag_config.h). Defaults are the fleet defaults of DESIGN.md: a
// 2 s capture window every 60 s per process (jittered), at most 2 processes capturing at
// once, the agent's own CPU held under 1% of a core, a 1 GiB disk spool.
// Fuzzed by tests/fuzz/config_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_AGENT_DAEMON_AGENT_CONFIG_H_
#define OPMAP_AGENT_DAEMON_AGENT_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::agent {

struct AgentConfig {
  // Where libopmap_inject registers (OPMAP_AGENT_SOCKET in the targets' environment).
  std::string socket = "/run/opmap/agent.sock";
  // Where `opmap attach` and `opmap-agent status` talk to the agent.
  std::string control_socket = "/run/opmap/agent-control.sock";
  std::string collector;      // HOST:PORT[,HOST:PORT...]; "" = keep everything spooled
  std::string token_file;     // file holding the agent token (first line)
  std::string metrics_listen; // HOST:PORT of the agent's Prometheus /metrics; "" = off
  std::string tls_ca;         // PEM: verify the collector; enables TLS
  std::string tls_cert;       // PEM client certificate for mTLS (with tls_key)
  std::string tls_key;
  std::string spool_dir = "/var/lib/opmap/spool";
  int64_t spool_bytes = int64_t{1} << 30;
  int64_t memory_queue_bytes = int64_t{8} << 20;
  absl::Duration counter_interval = absl::Seconds(1);
  absl::Duration power_interval = absl::Milliseconds(500);  // zero: no power reads
  std::string nvml_library = "libnvidia-ml.so.1";            // dlopened, never linked
  std::string powercap_root = "/sys/class/powercap";
  absl::Duration capture_window = absl::Seconds(2);
  absl::Duration capture_every = absl::Seconds(60);
  double capture_jitter = 0.2;     // ± fraction of capture_every
  int64_t max_concurrent_captures = 2;
  bool stalls = false;             // PC-sampling stall reasons in scheduled windows
  double cpu_budget = 0.01;        // cores, averaged; windows shrink to stay under it
  int64_t memory_budget_bytes = int64_t{256} << 20;  // attach: raw records per window
  int64_t chunk_records = 20000;   // converted and handed to the outbox while a window is open
  std::string agent_id;            // default: /etc/machine-id, else the host name
  bool insecure = false;           // plaintext to the collector (loopback / tests only)
  std::string config_file;
};

struct ParsedAgentArgs {
  AgentConfig config;
  bool help = false;
};

absl::StatusOr<ParsedAgentArgs> ParseAgentArgs(const std::vector<std::string>& args);
absl::Status ValidateAgentConfig(const AgentConfig& config);
std::string AgentUsage();

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_AGENT_CONFIG_H_
