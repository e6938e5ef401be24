// libFuzzer target for the settings the collector and the agent read at start:
//   mode 0  collector config file text (collector/collector_config.h ApplyConfigText,
//           then ValidateConfig, which checks the store URL)
//   mode 1  agent config file (agent/daemon/agent_config.h ParseAgentArgs with
//           --config pointing at a memfd holding the text)
//   mode 2  tokens file (collector/auth.h Authenticator::FromText), then Check() with
//           each token it holds and with garbage
//   mode 3  store URL (collector/store/store.h CheckStoreUrl; the clickhouse:// parser)
//   mode 4  command lines, one argument per line, for both ParseCollectorArgs and
//           ParseAgentArgs (--config arguments are dropped: no file is opened)
//   mode 5  the value parsers (common/config/flag_config.h): duration, size, positive,
//           boolean, HOST:PORT
// Input: mode byte (value % 6), then the text.
// Invariants: errors say why; a store URL's password never appears in an error; a
// token the tokens file holds is never "unknown"; parsed values are in range.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/daemon/agent_config.h"
#include "collector/auth.h"
#include "collector/clickhouse_client/http_client.h"
#include "collector/collector_config.h"
#include "collector/store/store.h"
#include "common/config/flag_config.h"
#include "common/text/text_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;
using fuzz::CheckErrorSaysWhy;
using fuzz::Fail;

// Passwords must never show up in an error. Checked with a marker: every `password=`
// value of the input is replaced by kSecret (bytes no error of ours contains) and the
// error for that input must not hold it. (Looking for the fuzzed value itself found the
// errors' own words: "password=assword, cluster" matches the list of known keys.)
constexpr std::string_view kSecret = "Zq7SeCrEt7qZ";

std::string WithSecret(std::string_view text) {
  std::string out(text);
  for (size_t at = out.find("password="); at != std::string::npos;
       at = out.find("password=", at + 9 + kSecret.size())) {
    const size_t start = at + 9;
    const size_t end = out.find('&', start);
    out.replace(start, end == std::string::npos ? std::string::npos : end - start, kSecret);
  }
  return out;
}

void CheckPasswordHidden(const absl::Status& status) {
  if (status.ok() || fuzz::KnownOpen("store-url-password")) return;
  const std::string_view message(status.message().data(), status.message().size());
  if (message.find(kSecret) != std::string_view::npos) {
    Fail("a password appears in an error", message);
  }
}

void CollectorConfigText(std::string_view text) {
  collector::CollectorConfig config;
  absl::Status s = collector::ApplyConfigText(text, "fuzz.conf", &config);
  CheckErrorSaysWhy(s, "collector ApplyConfigText");
  if (!s.ok()) return;
  absl::Status valid = collector::ValidateConfig(config);
  CheckErrorSaysWhy(valid, "collector ValidateConfig");
  if (config.store.find("password=") != std::string::npos) {
    collector::CollectorConfig secret = config;
    secret.store = WithSecret(config.store);
    CheckPasswordHidden(collector::ValidateConfig(secret));
  }
  if (valid.ok()) Check(collector::CheckStoreUrl(config.store).ok(), "a valid config's store URL");
}

// The agent reads its config file by path: hand it a memfd's /proc path.
void AgentConfigFile(std::string_view text) {
  static const int fd = memfd_create("opmap-fuzz-agent.conf", MFD_CLOEXEC);
  if (fd < 0) Fail("memfd_create");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) !=
                                   static_cast<ssize_t>(text.size())) {
    Fail("memfd write");
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  absl::StatusOr<agent::ParsedAgentArgs> parsed = agent::ParseAgentArgs({"--config", path});
  if (!parsed.ok()) {
    CheckErrorSaysWhy(parsed.status(), "ParseAgentArgs --config");
    return;
  }
  Check(agent::ValidateAgentConfig(parsed->config).ok(), "a parsed agent config validates");
  Check(parsed->config.capture_window < parsed->config.capture_every, "capture window < every");
}

void Tokens(std::string_view text) {
  absl::StatusOr<collector::Authenticator> auth = collector::Authenticator::FromText(text, "t");
  if (!auth.ok()) {
    CheckErrorSaysWhy(auth.status(), "Authenticator::FromText");
    return;
  }
  Check(auth->size() > 0, "a tokens file that loads holds a token");
  (void)auth->UnboundWriters();
  for (std::string_view line : text::Lines(text)) {
    std::vector<std::string_view> fields = text::Fields(line);
    if (fields.size() < 2 || fields[0].front() == '#') continue;
    const std::string bearer = "Bearer " + std::string(fields[0]);
    for (auto permission : {collector::Permission::kIngest, collector::Permission::kQuery}) {
      collector::Principal who;
      absl::Status s = auth->Check(bearer, permission, &who, std::string_view("fuzz-cn"));
      CheckErrorSaysWhy(s, "Authenticator::Check");
      if (absl::IsUnauthenticated(s)) Fail("a token of the file is refused as unknown", bearer);
      if (s.ok()) CheckErrorSaysWhy(who.MayWriteAgent(fields.back()), "MayWriteAgent");
    }
  }
  CheckErrorSaysWhy(auth->Check(text, collector::Permission::kQuery), "Check(garbage)");
  CheckErrorSaysWhy(auth->Check(std::nullopt, collector::Permission::kIngest), "Check(none)");
}

void StoreUrl(std::string_view url) {
  absl::Status s = collector::CheckStoreUrl(url);
  CheckErrorSaysWhy(s, "CheckStoreUrl");
  if (url.find("password=") != std::string_view::npos) {
    CheckPasswordHidden(collector::CheckStoreUrl(WithSecret(url)));
  }
  if (url.starts_with("clickhouse://")) {
    absl::StatusOr<collector::clickhouse_client::ClickHouseUrl> parsed =
        collector::clickhouse_client::ParseClickHouseUrl(url);
    Check(parsed.ok() == s.ok(), "CheckStoreUrl agrees with ParseClickHouseUrl");
    if (parsed.ok()) {
      Check(!parsed->client.endpoints.empty(), "a parsed URL has an endpoint");
      for (const auto& ep : parsed->client.endpoints) Check(!ep.host.empty(), "endpoint host");
    }
  }
}

void CommandLines(std::string_view text) {
  std::vector<std::string> args;
  for (std::string& a : fuzz::SplitOn(text, '\n', 64)) {
    if (a.starts_with("--config")) continue;  // would open a file named by the input
    args.push_back(std::move(a));
  }
  absl::StatusOr<collector::ParsedArgs> c = collector::ParseCollectorArgs(args);
  CheckErrorSaysWhy(c.status(), "ParseCollectorArgs");
  if (c.ok() && !c->help) Check(collector::ValidateConfig(c->config).ok(), "collector args validate");
  std::vector<std::string> secret_args;
  for (const std::string& arg : args) secret_args.push_back(WithSecret(arg));
  CheckPasswordHidden(collector::ParseCollectorArgs(secret_args).status());
  CheckPasswordHidden(agent::ParseAgentArgs(secret_args).status());
  absl::StatusOr<agent::ParsedAgentArgs> a = agent::ParseAgentArgs(args);
  CheckErrorSaysWhy(a.status(), "ParseAgentArgs");
}

void Values(std::string_view v) {
  if (absl::StatusOr<absl::Duration> d = config::ParseDuration(v); d.ok()) {
    Check(*d > absl::ZeroDuration() && *d != absl::InfiniteDuration(), "a duration > 0");
  } else {
    CheckErrorSaysWhy(d.status(), "ParseDuration");
  }
  if (absl::StatusOr<int64_t> b = config::ParseBytes(v); b.ok()) {
    Check(*b > 0, "a size > 0");
  } else {
    CheckErrorSaysWhy(b.status(), "ParseBytes");
  }
  if (absl::StatusOr<int64_t> p = config::ParsePositive(v); p.ok()) Check(*p > 0, "positive");
  CheckErrorSaysWhy(config::ParseBool(v).status(), "ParseBool");
  std::string host;
  int port = -1;
  if (config::SplitHostPort(v, &host, &port).ok()) {
    Check(!host.empty() && port >= 0 && port <= 65535, "HOST:PORT in range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Reader in(data, size);
  const uint8_t mode = in.U8() % 6;
  const std::string_view text = in.Rest();
  // libFuzzer learns the marker from the comparisons and writes it into inputs: such an
  // input cannot tell a leaked password from its own bytes.
  if (text.find(kSecret) != std::string_view::npos) return 0;
  switch (mode) {
    case 0: CollectorConfigText(text); break;
    case 1: AgentConfigFile(text); break;
    case 2: Tokens(text); break;
    case 3: StoreUrl(text); break;
    case 4: CommandLines(text); break;
    case 5: Values(text); break;
  }
  return 0;
}
