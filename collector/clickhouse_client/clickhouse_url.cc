// ParseClickHouseUrl and QuoteString (declared in http_client.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collector/clickhouse_client/http_client.h"
#include "common/base/absl_view.h"
#include "common/text/text_util.h"

namespace opmap::collector::clickhouse_client {
namespace {

constexpr std::string_view kScheme = "clickhouse://";
constexpr std::string_view kTlsScheme = "clickhouse+https://";

std::string_view SV(absl::string_view s) { return std::string_view(s.data(), s.size()); }

absl::Status Bad(std::string_view url, std::string_view what) {
  // `what` quotes pieces of the URL (a database name that swallowed "&password=..."):
  // redacted as well.
  return absl::InvalidArgumentError(
      absl::StrCat("clickhouse URL '", text::RedactPasswords(url), "': ",
                   text::RedactPasswords(what),
                   " (expected clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&password=P"
                   "&cluster=NAME)"));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(static_cast<unsigned char>(c));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (in[i] == '+') {
      out->push_back(' ');
    } else {
      out->push_back(in[i]);
    }
  }
  return true;
}

// Database and cluster names are spliced into SQL by the store: identifiers only.
bool IsIdentifier(std::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// `*port_given`: the port was written (else the default of the scheme applies).
absl::StatusOr<Endpoint> ParseEndpoint(std::string_view url, std::string_view hp,
                                       bool* port_given) {
  Endpoint ep;
  std::string_view port;
  if (!hp.empty() && hp[0] == '[') {  // [::1]:8123
    size_t close = hp.find(']');
    if (close == std::string_view::npos) {
      return Bad(url, absl::StrCat("host '", base::AbslView(hp), "' has no closing ']'"));
    }
    ep.host = std::string(hp.substr(1, close - 1));
    std::string_view rest = hp.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':')
        return Bad(url, absl::StrCat("junk after host '", base::AbslView(hp), "'"));
      port = rest.substr(1);
      if (port.empty()) return Bad(url, absl::StrCat("empty port in '", base::AbslView(hp), "'"));
    }
  } else {
    size_t colon = hp.rfind(':');
    ep.host = std::string(hp.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = hp.substr(colon + 1);
      if (port.empty()) return Bad(url, absl::StrCat("empty port in '", base::AbslView(hp), "'"));
    }
  }
  if (ep.host.empty()) return Bad(url, absl::StrCat("empty host in '", base::AbslView(hp), "'"));
  if (!port.empty()) {
    uint32_t p = 0;
    if (!absl::SimpleAtoi(base::AbslView(port), &p) || p == 0 || p > 65535) {
      return Bad(url, absl::StrCat("port '", base::AbslView(port), "' is not 1..65535"));
    }
    ep.port = static_cast<uint16_t>(p);
  }
  *port_given = !port.empty();
  return ep;
}

absl::StatusOr<absl::Duration> ParseMs(std::string_view url, std::string_view key,
                                       std::string_view value) {
  int64_t ms = 0;
  if (!absl::SimpleAtoi(base::AbslView(value), &ms) || ms <= 0) {
    return Bad(url, absl::StrCat(base::AbslView(key), " '", base::AbslView(value),
                                 "' is not a positive integer"));
  }
  return absl::Milliseconds(ms);
}

}  // namespace

absl::StatusOr<ClickHouseUrl> ParseClickHouseUrl(std::string_view url) {
  ClickHouseUrl out;
  std::string_view rest;
  if (url.substr(0, kScheme.size()) == kScheme) {
    rest = url.substr(kScheme.size());
  } else if (url.substr(0, kTlsScheme.size()) == kTlsScheme) {
    rest = url.substr(kTlsScheme.size());
    out.client.tls = true;
  } else {
    return Bad(url, "scheme is not clickhouse:// or clickhouse+https://");
  }
  size_t q = rest.find('?');
  std::string_view params = q == std::string_view::npos ? "" : rest.substr(q + 1);
  rest = rest.substr(0, q);
  size_t slash = rest.find('/');
  std::string_view hosts = rest.substr(0, slash);
  std::string_view db = slash == std::string_view::npos ? "" : rest.substr(slash + 1);

  if (hosts.empty()) return Bad(url, "no HOST:PORT");
  std::vector<bool> port_given;
  for (absl::string_view hp : absl::StrSplit(base::AbslView(hosts), ',')) {
    if (hp.empty()) return Bad(url, "empty entry in the host list");
    bool given = false;
    auto ep = ParseEndpoint(url, SV(hp), &given);
    if (!ep.ok()) return ep.status();
    out.client.endpoints.push_back(*std::move(ep));
    port_given.push_back(given);
  }
  if (!db.empty() && !IsIdentifier(db)) {
    return Bad(url, absl::StrCat("database '", base::AbslView(db),
                                 "' is not an identifier [A-Za-z_][A-Za-z0-9_]*"));
  }
  out.client.database = std::string(db);

  if (!params.empty()) {
    for (absl::string_view kv : absl::StrSplit(base::AbslView(params), '&')) {
      if (kv.empty()) continue;
      size_t eq = kv.find('=');
      std::string_view key = SV(kv.substr(0, eq));
      std::string value;
      std::string_view raw = eq == absl::string_view::npos ? "" : SV(kv.substr(eq + 1));
      if (!PercentDecode(raw, &value)) {
        return Bad(url, absl::StrCat("bad %-escape in the value of '", base::AbslView(key), "'"));
      }
      if (key == "user") {
        if (value.empty()) return Bad(url, "empty user");
        out.client.user = value;
      } else if (key == "password") {
        out.client.password = value;
      } else if (key == "cluster") {
        if (!IsIdentifier(value)) {
          return Bad(url, absl::StrCat("cluster '", value, "' is not an identifier"));
        }
        out.cluster = value;
      } else if (key == "rollup_bucket_ns") {
        int64_t ns = 0;
        if (!absl::SimpleAtoi(value, &ns) || ns < 0) {
          return Bad(url, absl::StrCat("rollup_bucket_ns '", value,
                                       "' is not a whole number of nanoseconds >= 0"));
        }
        out.rollup_bucket_ns = ns;
      } else if (key == "secure") {
        if (value != "0" && value != "1") {
          return Bad(url, absl::StrCat("secure '", value, "' is not 0 or 1"));
        }
        out.client.tls = out.client.tls || value == "1";
      } else if (key == "ca") {
        if (value.empty()) return Bad(url, "empty ca");
        out.client.ca_file = value;
      } else if (key == "connect_timeout_ms" || key == "request_timeout_ms") {
        auto d = ParseMs(url, key, value);
        if (!d.ok()) return d.status();
        (key == "connect_timeout_ms" ? out.client.connect_timeout : out.client.request_timeout) = *d;
      } else {
        return Bad(url, absl::StrCat("unknown parameter '", base::AbslView(key),
                                     "' (known: user, password, cluster, secure, ca, "
                                     "connect_timeout_ms, request_timeout_ms, "
                                     "rollup_bucket_ns)"));
      }
    }
  }
  if (!out.client.ca_file.empty() && !out.client.tls) {
    return Bad(url, "ca= without TLS (secure=1 or clickhouse+https://)");
  }
  // ClickHouse's https_port by default.
  for (size_t i = 0; i < port_given.size(); ++i) {
    if (out.client.tls && !port_given[i]) out.client.endpoints[i].port = 8443;
  }
  return out;
}

std::string QuoteString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  for (char c : s) {
    if (c == '\\' || c == '\'') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace opmap::collector::clickhouse_client
