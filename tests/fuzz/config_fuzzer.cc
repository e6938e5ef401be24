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
#include "collector/clickhouse/http_client.h"
#include "collector/collector_config.h"
#include "collector/store/store.h"
#include "common/config/flag_config.h"
#include "common/config/text_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;
using fuzz::CheckErrorSaysWhy;
using fuzz::Fail;

// A password given in `url` (raw, as it appears) must not show up in `message` unless
// the same bytes appear in the URL elsewhere too.
void CheckPasswordHidden(std::string_view url, const absl::Status& status) {
  if (status.ok() || fuzz::KnownOpen("store-url-password")) return;
  const std::string_view message(status.message().data(), status.message().size());
  for (size_t at = url.find("password="); at != std::string_view::npos;
       at = url.find("password=", at + 1)) {
    std::string_view value = url.substr(at + 9);
    value = value.substr(0, value.find('&'));
    if (value.size() < 6) continue;
    if (url.find(value) != at + 9 || url.find(value, at + 10) != std::string_view::npos) continue;
    if (message.find(value) != std::string_view::npos) {
      Fail("a store URL's password appears in an error", message);
    }
  }
}

void CollectorConfigText(std::string_view text) {
  collector::CollectorConfig config;
  absl::Status s = collector::ApplyConfigText(text, "fuzz.conf", &config);
  CheckErrorSaysWhy(s, "collector ApplyConfigText");
  if (!s.ok()) return;
  absl::Status valid = collector::ValidateConfig(config);
  CheckErrorSaysWhy(valid, "collector ValidateConfig");
  CheckPasswordHidden(config.store, valid);
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
  CheckPasswordHidden(url, s);
  if (url.starts_with("clickhouse://")) {
    absl::StatusOr<collector::clickhouse::ClickHouseUrl> parsed =
        collector::clickhouse::ParseClickHouseUrl(url);
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
  if (!c.ok()) {
    std::string store;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--store") store = args[i + 1];
    }
    CheckPasswordHidden(store, c.status());
  }
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
