// opmap-collector's settings: command-line flags and an optional config file of
// `key = value` lines with the same keys as the flags (without the leading "--").
// Flags override the file. Errors name the flag or the file and line; the binary exits 2.
// Fuzzed by tests/fuzz/config_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_COLLECTOR_COLLECTOR_CONFIG_H_
#define OPMAP_COLLECTOR_COLLECTOR_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::collector {

struct CollectorConfig {
  std::string listen = "127.0.0.1:7700";         // gRPC host:port; port 0 = any free port
  std::string store = "sqlite:./opmap.db";
  std::string tokens_file;                        // required unless insecure_no_auth
  std::string tls_cert;                           // PEM; with tls_key enables TLS
  std::string tls_key;
  std::string tls_client_ca;                      // PEM; requires and verifies client certs
  absl::Duration raw_retention = absl::Hours(24); // raw batches of complete sessions
  std::string metrics_listen = "127.0.0.1:9464";  // "" = no metrics endpoint
  bool insecure_no_auth = false;
  int64_t max_session_records = 3'000'000;        // per session held for its rollup
  int64_t max_message_bytes = 64 << 20;           // largest Batch accepted
  int64_t max_held_records = 3'000'000;             // all incomplete sessions together
  int64_t max_session_bytes = 256 << 20;          // batch bytes one session may hold
  int64_t max_held_bytes = 256 << 20;             // ... all incomplete sessions together
  int64_t max_streams = 256;                      // open Ingest streams in all
  int64_t max_streams_per_token = 64;             // ... and per token
  int64_t max_queries = 32;                       // Query calls in progress in all
  int64_t max_queries_per_token = 8;              // ... and per token
  int64_t max_exports = 4;                        // ExportTrace calls in progress in all
  int64_t max_exports_per_token = 2;              // ... and per token
  absl::Duration request_body_timeout = absl::Seconds(10);  // a call's request, once begun
  absl::Duration stream_idle_timeout = absl::Seconds(60);   // an Ingest stream with no batch
  absl::Duration write_timeout = absl::Seconds(30);         // a peer that does not read
  int64_t group_commit_max_batches = 256;         // batches in one store transaction; 1 = off
  int64_t group_commit_max_records = 2'000'000;   // ... records in one
  absl::Duration group_commit_delay = absl::ZeroDuration();  // wait for more after the first
  absl::Duration integrity_check_every = absl::Hours(1);  // PRAGMA quick_check period
  std::string config_file;                        // --config, "" = none
};

struct ParsedArgs {
  CollectorConfig config;
  bool help = false;
};

// Parses argv (argv[0] skipped): `--flag value` or `--flag=value`; boolean flags take no
// value. Reads --config FILE when given, then applies the flags over it, then validates.
absl::StatusOr<ParsedArgs> ParseCollectorArgs(const std::vector<std::string>& args);

// Applies `key = value` lines ('#' starts a comment) to `config`. `source` names the file.
absl::Status ApplyConfigText(std::string_view text, std::string_view source,
                             CollectorConfig* config);

// Cross-field checks: TLS cert and key together, a client CA only with them, a tokens
// file unless insecure_no_auth (and not both), well-formed addresses.
absl::Status ValidateConfig(const CollectorConfig& config);

// "24h", "90m", "1h30m", "7d", "3600s" (sum of integer·unit terms); must be > 0.
absl::StatusOr<absl::Duration> ParseRetention(std::string_view text);

// Splits "host:port" / "[v6]:port"; the port must be 0..65535.
absl::Status SplitHostPort(std::string_view address, std::string* host, int* port);

std::string CollectorUsage();

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_COLLECTOR_CONFIG_H_
