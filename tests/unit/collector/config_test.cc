#include "collector/collector_config.h"
#include "common/config/flag_config.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace opmap::collector {
namespace {

absl::StatusOr<ParsedArgs> Parse(std::vector<std::string> args) {
  return ParseCollectorArgs(args);
}

std::string ErrorOf(std::vector<std::string> args) {
  absl::StatusOr<ParsedArgs> p = Parse(std::move(args));
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : std::string(p.status().message());
}

std::string TempFile(const std::string& text) {
  char path[] = "/tmp/opmap_config_test_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, Defaults) {
  absl::StatusOr<ParsedArgs> p = Parse({"--tokens", "t.txt"});
  ASSERT_TRUE(p.ok()) << p.status();
  const CollectorConfig& c = p->config;
  EXPECT_EQ(c.listen, "127.0.0.1:7700");
  EXPECT_EQ(c.store, "sqlite:./opmap.db");
  EXPECT_EQ(c.tokens_file, "t.txt");
  EXPECT_EQ(c.raw_retention, absl::Hours(24));
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9464");
  EXPECT_FALSE(c.insecure_no_auth);
  EXPECT_TRUE(c.tls_cert.empty());
}

TEST(ConfigTest, FlagsInBothForms) {
  absl::StatusOr<ParsedArgs> p =
      Parse({"--listen=127.0.0.1:0", "--store", "sqlite:/tmp/x.db", "--insecure-no-auth",
             "--raw-retention", "1h30m", "--metrics-listen=", "--tls-cert", "c.pem",
             "--tls-key=k.pem", "--tls-client-ca", "ca.pem", "--max-session-records", "100"});
  ASSERT_TRUE(p.ok()) << p.status();
  const CollectorConfig& c = p->config;
  EXPECT_EQ(c.listen, "127.0.0.1:0");
  EXPECT_EQ(c.store, "sqlite:/tmp/x.db");
  EXPECT_TRUE(c.insecure_no_auth);
  EXPECT_EQ(c.raw_retention, absl::Minutes(90));
  EXPECT_EQ(c.metrics_listen, "");
  EXPECT_EQ(c.tls_cert, "c.pem");
  EXPECT_EQ(c.tls_key, "k.pem");
  EXPECT_EQ(c.tls_client_ca, "ca.pem");
  EXPECT_EQ(c.max_session_records, 100);
}

TEST(ConfigTest, Help) {
  absl::StatusOr<ParsedArgs> p = Parse({"--listen", "x", "--help"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->help);
  std::string usage = CollectorUsage();
  for (const char* flag : {"--listen", "--store", "--tokens", "--tls-cert", "--tls-key",
                           "--tls-client-ca", "--raw-retention", "--metrics-listen", "--config",
                           "--insecure-no-auth"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(ConfigTest, FileThenFlagsOverride) {
  std::string file = TempFile(
      "# collector settings\n"
      "listen = 0.0.0.0:7700\n"
      "store = \"sqlite:/var/lib/opmap/opmap.db\"   # quoted\n"
      "tokens = /etc/opmap/tokens\n"
      "raw-retention = 7d\n"
      "\n"
      "metrics-listen = 127.0.0.1:9999\n");
  absl::StatusOr<ParsedArgs> p = Parse({"--config", file, "--listen", "127.0.0.1:0"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->config.listen, "127.0.0.1:0");  // the flag wins, wherever it is
  EXPECT_EQ(p->config.store, "sqlite:/var/lib/opmap/opmap.db");
  EXPECT_EQ(p->config.tokens_file, "/etc/opmap/tokens");
  EXPECT_EQ(p->config.raw_retention, absl::Hours(7 * 24));
  EXPECT_EQ(p->config.metrics_listen, "127.0.0.1:9999");
  EXPECT_EQ(p->config.config_file, file);
  p = Parse({"--listen", "127.0.0.1:1", "--config=" + file});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->config.listen, "127.0.0.1:1");
  std::remove(file.c_str());
}

TEST(ConfigTest, FileErrorsNameFileAndLine) {
  CollectorConfig c;
  auto error = [&](const char* text) {
    absl::Status s = ApplyConfigText(text, "c.conf", &c);
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  };
  EXPECT_EQ(error("listen = a:1\nbogus = 1\n"), "c.conf:2: unknown key 'bogus'");
  EXPECT_EQ(error("\n\nlisten\n"), "c.conf:3: expected `key = value`");
  EXPECT_EQ(error("raw-retention = soon\n"),
            "c.conf:1: raw-retention: invalid duration 'soon' (expected a positive duration "
            "such as 24h, 90m, 1.5s, 500ms, 7d, 1h30m)");
  EXPECT_EQ(error("insecure-no-auth = maybe\n"),
            "c.conf:1: insecure-no-auth: 'maybe' is not a boolean (true/false)");
  EXPECT_EQ(error("config = other.conf\n"), "c.conf:1: `config` cannot be set in a config file");
  EXPECT_EQ(error("max-session-records = -5\n"),
            "c.conf:1: max-session-records: '-5' is not a positive integer");
  EXPECT_EQ(ErrorOf({"--config", "/nonexistent/c.conf"}), "--config: cannot read /nonexistent/c.conf");
}

// One grammar for every duration, daemons and CLI alike (common/config/flag_config.h):
// `opmap-agent --capture-window 1.5s` was refused while `opmap attach --duration 1.5s`
// worked.
TEST(ConfigTest, OneDurationGrammar) {
  auto ok = [](const char* text) {
    absl::StatusOr<absl::Duration> d = config::ParseDuration(text);
    EXPECT_TRUE(d.ok()) << text << ": " << d.status();
    return d.ok() ? *d : absl::ZeroDuration();
  };
  EXPECT_EQ(ok("1.5s"), absl::Milliseconds(1500));
  EXPECT_EQ(ok("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(ok("1h30m"), absl::Minutes(90));
  EXPECT_EQ(ok(".5m"), absl::Seconds(30));
  EXPECT_EQ(ok("7d"), absl::Hours(168));
  EXPECT_EQ(ok("2us"), absl::Microseconds(2));
  EXPECT_EQ(ok("10ns"), absl::Nanoseconds(10));
  EXPECT_EQ(ok(" 1m30s "), absl::Seconds(90));
  for (const char* bad : {"", "0", "0s", "-1s", "1", "s", "inf", "infs", "1e3s", "1.5.5s", "1 s",
                          "1x", "nan", "768614336404564651d"}) {
    EXPECT_FALSE(config::ParseDuration(bad).ok()) << bad;
  }
  EXPECT_EQ(*config::ParseDurationOrZero("0"), absl::ZeroDuration());
  EXPECT_EQ(*config::ParseDurationOrZero("0s"), absl::ZeroDuration());
  EXPECT_FALSE(config::ParseDurationOrZero("-0.5s").ok());
  EXPECT_EQ(std::string(config::ParseDurationOrZero("x").status().message()),
            "invalid duration 'x' (expected a duration such as 24h, 90m, 1.5s, 500ms, 7d, 1h30m)");
}

TEST(ConfigTest, FlagErrors) {
  EXPECT_EQ(ErrorOf({"--bogus"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(ErrorOf({"--tokens"}), "--tokens needs a value");
  EXPECT_EQ(ErrorOf({"positional"}), "unexpected argument 'positional'");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--raw-retention", "0h"}),
            "--raw-retention: invalid duration '0h' (expected a positive duration such as "
            "24h, 90m, 1.5s, 500ms, 7d, 1h30m)");
  // 24 × this many days overflows int64 (it once wrapped to 8 hours): too long, refused.
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--raw-retention", "768614336404564651d"}),
            "--raw-retention: invalid duration '768614336404564651d' (expected a positive "
            "duration such as 24h, 90m, 1.5s, 500ms, 7d, 1h30m)");
  EXPECT_EQ(ErrorOf({}),
            "--tokens FILE is required (lines `TOKEN ROLE [NAME]`); pass --insecure-no-auth to "
            "run without authentication");
  EXPECT_EQ(ErrorOf({"--tokens", "t", "--insecure-no-auth"}),
            "--tokens and --insecure-no-auth exclude each other");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--tls-cert", "c.pem"}),
            "--tls-cert and --tls-key must be given together");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--tls-client-ca", "ca.pem"}),
            "--tls-client-ca needs --tls-cert and --tls-key");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--listen", "localhost"}),
            "--listen: invalid address 'localhost': no port (expected HOST:PORT)");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--listen", "127.0.0.1:99999"}),
            "--listen: invalid address '127.0.0.1:99999': port must be 0..65535 (expected "
            "HOST:PORT)");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--metrics-listen", ":80"}),
            "--metrics-listen: invalid address ':80': no host (expected HOST:PORT)");
  EXPECT_EQ(ErrorOf({"--insecure-no-auth", "--store", "postgres://x"}),
            "--store: store URL \"postgres://x\": unknown store scheme (expected "
            "\"sqlite:PATH\" or \"clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&cluster=NAME\")");
}

TEST(ConfigTest, Durations) {
  EXPECT_EQ(*ParseRetention("24h"), absl::Hours(24));
  EXPECT_EQ(*ParseRetention("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseRetention("3600s"), absl::Hours(1));
  EXPECT_EQ(*ParseRetention("1d12h"), absl::Hours(36));
  // Decimals too, as every duration opmap reads (OneDurationGrammar).
  EXPECT_EQ(*ParseRetention("1.5h"), absl::Minutes(90));
  for (const char* bad : {"", "h", "24", "24x", "-1h", "0s"}) {
    EXPECT_FALSE(ParseRetention(bad).ok()) << bad;
  }
}

TEST(ConfigTest, HostPort) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(SplitHostPort("[::1]:7700", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 7700);
  ASSERT_TRUE(SplitHostPort("0.0.0.0:0", &host, &port).ok());
  EXPECT_EQ(port, 0);
  EXPECT_FALSE(SplitHostPort("::1:7700", &host, &port).ok());
  EXPECT_FALSE(SplitHostPort("h:", &host, &port).ok());
}

}  // namespace
}  // namespace opmap::collector

namespace opmap::config {
namespace {

TEST(FlagValues, CommaListsTrimAndSkipEmptyItems) {
  EXPECT_EQ(SplitCommaList(" a, b,,c , "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitCommaList("0.5,0.99"), (std::vector<std::string>{"0.5", "0.99"}));
  EXPECT_TRUE(SplitCommaList(" , ,").empty());
  EXPECT_TRUE(SplitCommaList("").empty());
}

TEST(FlagValues, AddressListsAndLabels) {
  absl::StatusOr<std::vector<std::string>> a = ParseAddressList(" c1:7700, [::1]:7701 ,,");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, (std::vector<std::string>{"c1:7700", "[::1]:7701"}));
  EXPECT_EQ(ParseAddressList("c1").status().message(), "'c1' is not HOST:PORT");
  EXPECT_EQ(ParseAddressList(" , ").status().message(), "needs at least one HOST:PORT");
  EXPECT_FALSE(ParseAddressList("c1:99999").ok());
  absl::StatusOr<std::pair<std::string, std::string>> l = ParseLabel("team=a=b");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->first, "team");
  EXPECT_EQ(l->second, "a=b");
  EXPECT_EQ(ParseLabel("empty=")->second, "");
  EXPECT_EQ(ParseLabel("=x").status().message(), "needs KEY=VALUE");
  EXPECT_FALSE(ParseLabel("novalue").ok());
}

}  // namespace
}  // namespace opmap::config
