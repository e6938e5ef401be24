#include "collector/collector_config.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "collector/store/store.h"
#include "common/config/flag_config.h"

namespace opmap::collector {
namespace {

using Key = config::ConfigKey<CollectorConfig>;
using config::StringSetter;

const std::vector<Key>& Keys() {
  static const std::vector<Key>* keys = new std::vector<Key>{
      {"listen", false, "HOST:PORT", "gRPC address (default 127.0.0.1:7700; port 0 = any)",
       StringSetter(&CollectorConfig::listen)},
      {"store", false, "URL",
       "store: sqlite:PATH (default sqlite:./opmap.db) or "
       "clickhouse://HOST:PORT[,HOST:PORT...]/DB?user=U&password=P&cluster=NAME (docs/scale-out.md)",
       StringSetter(&CollectorConfig::store)},
      {"tokens", false, "FILE", "tokens file: lines `TOKEN ROLE [NAME] [agents=ID,...] [cert=CN]`, roles "
       "agent/analyst/admin (docs/security.md)",
       StringSetter(&CollectorConfig::tokens_file)},
      {"tls-cert", false, "FILE", "server certificate chain (PEM); enables TLS with --tls-key",
       StringSetter(&CollectorConfig::tls_cert)},
      {"tls-key", false, "FILE", "server private key (PEM)",
       StringSetter(&CollectorConfig::tls_key)},
      {"tls-client-ca", false, "FILE", "CA (PEM) for client certificates: requires mTLS",
       StringSetter(&CollectorConfig::tls_client_ca)},
      {"raw-retention", false, "DURATION",
       "keep raw events of complete sessions this long (default 24h; rollups stay)",
       config::ParsedSetter(&CollectorConfig::raw_retention, &config::ParseDuration)},
      {"metrics-listen", false, "HOST:PORT",
       "Prometheus /metrics address (default 127.0.0.1:9464; empty = off)",
       StringSetter(&CollectorConfig::metrics_listen, /*allow_empty=*/true)},
      {"max-session-records", false, "N",
       "records one session may hold until its rollup (default 3000000)",
       config::ParsedSetter(&CollectorConfig::max_session_records, &config::ParsePositive)},
      {"max-message-bytes", false, "N", "largest batch message accepted (default 67108864)",
       config::ParsedSetter(&CollectorConfig::max_message_bytes, &config::ParsePositive)},
      {"max-held-records", false, "N",
       "records all incomplete sessions together may hold in memory (default 3000000; "
       "over it batches are refused RESOURCE_EXHAUSTED and agents resend later)",
       config::ParsedSetter(&CollectorConfig::max_held_records, &config::ParsePositive)},
      {"max-session-bytes", false, "N",
       "batch bytes (strings included) one session may hold until its rollup (default "
       "268435456; over it a batch is rejected TOO_LARGE)",
       config::ParsedSetter(&CollectorConfig::max_session_bytes, &config::ParsePositive)},
      {"max-held-bytes", false, "N",
       "batch bytes all incomplete sessions together may hold in memory (default 268435456; "
       "over it batches are refused RESOURCE_EXHAUSTED and agents resend later)",
       config::ParsedSetter(&CollectorConfig::max_held_bytes, &config::ParsePositive)},
      {"max-streams", false, "N", "open Ingest streams in all (default 256)",
       config::ParsedSetter(&CollectorConfig::max_streams, &config::ParsePositive)},
      {"max-streams-per-token", false, "N", "open Ingest streams per token (default 64)",
       config::ParsedSetter(&CollectorConfig::max_streams_per_token, &config::ParsePositive)},
      {"max-queries", false, "N",
       "Query calls (exports included) in progress in all (default 32; more are refused "
       "RESOURCE_EXHAUSTED)",
       config::ParsedSetter(&CollectorConfig::max_queries, &config::ParsePositive)},
      {"max-queries-per-token", false, "N", "Query calls in progress per token (default 8)",
       config::ParsedSetter(&CollectorConfig::max_queries_per_token, &config::ParsePositive)},
      {"max-exports", false, "N", "ExportTrace calls in progress in all (default 4)",
       config::ParsedSetter(&CollectorConfig::max_exports, &config::ParsePositive)},
      {"max-exports-per-token", false, "N", "ExportTrace calls in progress per token (default 2)",
       config::ParsedSetter(&CollectorConfig::max_exports_per_token, &config::ParsePositive)},
      {"request-body-timeout", false, "DURATION",
       "a call whose request message has not arrived this long after it began is cancelled "
       "(default 10s)",
       config::ParsedSetter(&CollectorConfig::request_body_timeout, &config::ParseDuration)},
      {"stream-idle-timeout", false, "DURATION",
       "an Ingest stream that brings no batch for this long is cancelled (default 60s; agents "
       "reconnect for their next windows)",
       config::ParsedSetter(&CollectorConfig::stream_idle_timeout, &config::ParseDuration)},
      {"write-timeout", false, "DURATION",
       "a peer that does not take an export chunk or an ack for this long is cancelled "
       "(default 30s)",
       config::ParsedSetter(&CollectorConfig::write_timeout, &config::ParseDuration)},
      {"group-commit-max-batches", false, "N",
       "batches of any streams stored in one transaction (SQLite) or one INSERT per table "
       "(ClickHouse) at most (default 256; 1 = each batch alone)",
       config::ParsedSetter(&CollectorConfig::group_commit_max_batches, &config::ParsePositive)},
      {"group-commit-max-records", false, "N",
       "records in one group commit at most (default 2000000; a larger batch goes alone)",
       config::ParsedSetter(&CollectorConfig::group_commit_max_records, &config::ParsePositive)},
      {"group-commit-delay", false, "DURATION",
       "how long a group waits for more batches after its first (default 0s: groups form "
       "while the previous one commits; e.g. 2ms trades ack latency for larger groups)",
       config::ParsedSetter(&CollectorConfig::group_commit_delay, &config::ParseDurationOrZero)},
      {"integrity-check-every", false, "DURATION",
       "how often the store's integrity is checked while running (default 1h; also at start)",
       config::ParsedSetter(&CollectorConfig::integrity_check_every, &config::ParseDuration)},
      {"insecure-no-auth", true, "", "run without tokens (prints a warning; never in production)",
       config::ParsedSetter(&CollectorConfig::insecure_no_auth, &config::ParseBool)},
  };
  return *keys;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseRetention(std::string_view text) {
  return config::ParseDuration(text);
}

absl::Status SplitHostPort(std::string_view address, std::string* host, int* port) {
  return config::SplitHostPort(address, host, port);
}

absl::Status ApplyConfigText(std::string_view text, std::string_view source,
                             CollectorConfig* config) {
  return config::ApplyConfigText(text, source, Keys(), config);
}

absl::Status ValidateConfig(const CollectorConfig& c) {
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(c.listen, &host, &port); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("--listen: %s", s.message()));
  }
  if (!c.metrics_listen.empty()) {
    if (absl::Status s = SplitHostPort(c.metrics_listen, &host, &port); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("--metrics-listen: %s", s.message()));
    }
  }
  if (absl::Status s = CheckStoreUrl(c.store); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("--store: %s", s.message()));
  }
  if (c.max_message_bytes > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-message-bytes: %d is over 1 GiB", c.max_message_bytes));
  }
  if (c.max_streams > 100'000 || c.max_streams_per_token > c.max_streams) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-streams-per-token (%d) must not exceed --max-streams (%d), itself at most 100000",
        c.max_streams_per_token, c.max_streams));
  }
  if (c.max_queries > 10'000 || c.max_queries_per_token > c.max_queries ||
      c.max_exports > c.max_queries || c.max_exports_per_token > c.max_exports) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-queries-per-token (%d) and --max-exports (%d) must not exceed --max-queries "
        "(%d), itself at most 10000, nor --max-exports-per-token (%d) --max-exports",
        c.max_queries_per_token, c.max_exports, c.max_queries, c.max_exports_per_token));
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  if (!c.tls_client_ca.empty() && c.tls_cert.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (c.tokens_file.empty() && !c.insecure_no_auth) {
    return absl::InvalidArgumentError(
        "--tokens FILE is required (lines `TOKEN ROLE [NAME]`); pass --insecure-no-auth to "
        "run without authentication");
  }
  if (!c.tokens_file.empty() && c.insecure_no_auth) {
    return absl::InvalidArgumentError("--tokens and --insecure-no-auth exclude each other");
  }
  return absl::OkStatus();
}

absl::StatusOr<ParsedArgs> ParseCollectorArgs(const std::vector<std::string>& args) {
  ParsedArgs out;
  absl::StatusOr<bool> help =
      config::ParseArgsInto(args, Keys(), &out.config, &out.config.config_file);
  // Errors quote the values they refuse: never a password from a store URL.
  if (!help.ok()) return config::Redacted(help.status());
  out.help = *help;
  if (out.help) return out;
  if (absl::Status s = ValidateConfig(out.config); !s.ok()) return config::Redacted(s);
  return out;
}

std::string CollectorUsage() {
  std::string out =
      "usage: opmap-collector [--config FILE] [flags]\n"
      "       opmap-collector --version\n"
      "\n"
      "Receives batches from opmap agents (gRPC Ingest), stores them exactly once and\n"
      "answers queries (gRPC Query). A config file holds `key = value` lines with the\n"
      "keys below (without \"--\"); flags override it.\n"
      "\n"
      "flags:\n";
  out += config::FlagHelp(Keys());
  out +=
      "\n"
      "On start it prints `listening on HOST:PORT` (and `metrics on HOST:PORT`) to stdout.\n"
      "SIGTERM/SIGINT: stops accepting, finishes in-flight commits, exits 0.\n"
      "Exit codes: 0 ok, 1 runtime error (store, bind), 2 bad flags or config.\n";
  return out;
}

}  // namespace opmap::collector
