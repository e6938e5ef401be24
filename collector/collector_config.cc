#include "collector/collector_config.h"

#include <charconv>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_format.h"
#include "collector/text_util.h"

namespace opmap::collector {
namespace {

using Setter = std::function<absl::Status(std::string_view value, CollectorConfig*)>;

struct Key {
  std::string_view name;
  bool boolean;
  std::string_view value_hint;
  std::string_view help;
  Setter set;
};

absl::StatusOr<bool> ParseBool(std::string_view v) {
  std::string s = text::Lower(v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a boolean (true/false)", v));
}

absl::StatusOr<int64_t> ParsePositive(std::string_view v) {
  int64_t x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a positive integer", v));
  }
  return x;
}

Setter String(std::string CollectorConfig::*field, bool allow_empty) {
  return [field, allow_empty](std::string_view v, CollectorConfig* c) -> absl::Status {
    if (v.empty() && !allow_empty) return absl::InvalidArgumentError("empty value");
    c->*field = std::string(v);
    return absl::OkStatus();
  };
}

Setter Positive(int64_t CollectorConfig::*field) {
  return [field](std::string_view v, CollectorConfig* c) -> absl::Status {
    absl::StatusOr<int64_t> x = ParsePositive(v);
    if (!x.ok()) return x.status();
    c->*field = *x;
    return absl::OkStatus();
  };
}

const std::vector<Key>& Keys() {
  static const std::vector<Key>* keys = new std::vector<Key>{
      {"listen", false, "HOST:PORT", "gRPC address (default 127.0.0.1:7700; port 0 = any)",
       String(&CollectorConfig::listen, false)},
      {"store", false, "URL", "store: sqlite:PATH (default sqlite:./opmap.db)",
       String(&CollectorConfig::store, false)},
      {"tokens", false, "FILE", "tokens file: lines `TOKEN ROLE [NAME]`, roles agent/analyst/admin",
       String(&CollectorConfig::tokens_file, false)},
      {"tls-cert", false, "FILE", "server certificate chain (PEM); enables TLS with --tls-key",
       String(&CollectorConfig::tls_cert, false)},
      {"tls-key", false, "FILE", "server private key (PEM)",
       String(&CollectorConfig::tls_key, false)},
      {"tls-client-ca", false, "FILE", "CA (PEM) for client certificates: requires mTLS",
       String(&CollectorConfig::tls_client_ca, false)},
      {"raw-retention", false, "DURATION",
       "keep raw events of complete sessions this long (default 24h; rollups stay)",
       [](std::string_view v, CollectorConfig* c) -> absl::Status {
         absl::StatusOr<absl::Duration> d = ParseRetention(v);
         if (!d.ok()) return d.status();
         c->raw_retention = *d;
         return absl::OkStatus();
       }},
      {"metrics-listen", false, "HOST:PORT",
       "Prometheus /metrics address (default 127.0.0.1:9464; empty = off)",
       String(&CollectorConfig::metrics_listen, true)},
      {"max-session-records", false, "N",
       "records one session may hold until its rollup (default 20000000)",
       Positive(&CollectorConfig::max_session_records)},
      {"max-message-bytes", false, "N", "largest batch message accepted (default 67108864)",
       Positive(&CollectorConfig::max_message_bytes)},
      {"insecure-no-auth", true, "", "run without tokens (prints a warning; never in production)",
       [](std::string_view v, CollectorConfig* c) -> absl::Status {
         absl::StatusOr<bool> b = ParseBool(v);
         if (!b.ok()) return b.status();
         c->insecure_no_auth = *b;
         return absl::OkStatus();
       }},
  };
  return *keys;
}

const Key* FindKey(std::string_view name) {
  for (const Key& k : Keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("--config: cannot read %s", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::StatusOr<absl::Duration> ParseRetention(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid duration '%s' (expected a positive duration such as 24h, 90m, 7d, 1h30m)",
        text));
  };
  std::string_view s = text::Trim(text);
  if (s.empty()) return bad();
  absl::Duration total = absl::ZeroDuration();
  while (!s.empty()) {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || p == s.data() || p == s.data() + s.size() || n < 0) return bad();
    s.remove_prefix(p - s.data());
    char unit = s.front();
    s.remove_prefix(1);
    switch (unit) {
      case 's': total += absl::Seconds(n); break;
      case 'm': total += absl::Minutes(n); break;
      case 'h': total += absl::Hours(n); break;
      case 'd': total += absl::Hours(24 * n); break;
      default: return bad();
    }
  }
  if (total <= absl::ZeroDuration() || total == absl::InfiniteDuration()) return bad();
  return total;
}

absl::Status SplitHostPort(std::string_view address, std::string* host, int* port) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalid address '%s': %s (expected HOST:PORT)", address, why));
  };
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view h = address.substr(0, colon);
  std::string_view p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return bad("an IPv6 host must be in brackets, e.g. [::1]:7700");
  }
  if (h.empty()) return bad("no host");
  int x = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), x);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || x < 0 || x > 65535) {
    return bad("port must be 0..65535");
  }
  *host = std::string(h);
  *port = x;
  return absl::OkStatus();
}

absl::Status ApplyConfigText(std::string_view text, std::string_view source,
                             CollectorConfig* config) {
  int line_no = 0;
  for (std::string_view line : text::Lines(text)) {
    ++line_no;
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = text::Trim(line);
    if (line.empty()) continue;
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", source, line_no, what));
    };
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return error("expected `key = value`");
    std::string_view key = text::Trim(line.substr(0, eq));
    std::string_view value = text::Trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (key == "config") return error("`config` cannot be set in a config file");
    const Key* k = FindKey(key);
    if (k == nullptr) return error(absl::StrFormat("unknown key '%s'", key));
    if (absl::Status s = k->set(value, config); !s.ok()) {
      return error(absl::StrFormat("%s: %s", key, s.message()));
    }
  }
  return absl::OkStatus();
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
  if (!c.store.starts_with("sqlite:") || c.store.size() == 7) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--store: unsupported store '%s' (expected sqlite:PATH)", c.store));
  }
  if (c.max_message_bytes > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-message-bytes: %d is over 1 GiB", c.max_message_bytes));
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
  std::vector<std::pair<const Key*, std::string>> flags;
  std::string config_file;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      return out;
    }
    if (!arg.starts_with("--")) {
      return absl::InvalidArgumentError(absl::StrFormat("unexpected argument '%s'", arg));
    }
    std::string_view name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string_view::npos) {
      value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    if (name == "config") {
      if (!value) {
        if (i + 1 >= args.size()) return absl::InvalidArgumentError("--config needs a value");
        value = args[++i];
      }
      if (value->empty()) return absl::InvalidArgumentError("--config: empty value");
      config_file = *value;
      continue;
    }
    const Key* key = FindKey(name);
    if (key == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag --%s (see --help)", name));
    }
    if (!value) {
      if (key->boolean) {
        value = "true";
      } else {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(absl::StrFormat("--%s needs a value", name));
        }
        value = args[++i];
      }
    }
    flags.emplace_back(key, std::move(*value));
  }
  if (!config_file.empty()) {
    absl::StatusOr<std::string> text = ReadFile(config_file);
    if (!text.ok()) return text.status();
    if (absl::Status s = ApplyConfigText(*text, config_file, &out.config); !s.ok()) return s;
    out.config.config_file = config_file;
  }
  for (const auto& [key, value] : flags) {
    if (absl::Status s = key->set(value, &out.config); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("--%s: %s", key->name, s.message()));
    }
  }
  if (absl::Status s = ValidateConfig(out.config); !s.ok()) return s;
  return out;
}

std::string CollectorUsage() {
  std::string out =
      "usage: opmap-collector [--config FILE] [flags]\n"
      "\n"
      "Receives batches from opmap agents (gRPC Ingest), stores them exactly once and\n"
      "answers queries (gRPC Query). A config file holds `key = value` lines with the\n"
      "keys below (without \"--\"); flags override it.\n"
      "\n"
      "flags:\n";
  auto line = [&](std::string_view flag, std::string_view hint, std::string_view help) {
    std::string left = absl::StrFormat("  --%s%s%s", flag, hint.empty() ? "" : " ", hint);
    absl::StrAppendFormat(&out, "%-30s %s\n", left, help);
  };
  line("config", "FILE", "read `key = value` settings from FILE");
  for (const Key& k : Keys()) line(k.name, k.value_hint, k.help);
  line("help", "", "print this help");
  out +=
      "\n"
      "On start it prints `listening on HOST:PORT` (and `metrics on HOST:PORT`) to stdout.\n"
      "SIGTERM/SIGINT: stops accepting, finishes in-flight commits, exits 0.\n"
      "Exit codes: 0 ok, 1 runtime error (store, bind), 2 bad flags or config.\n";
  return out;
}

}  // namespace opmap::collector
