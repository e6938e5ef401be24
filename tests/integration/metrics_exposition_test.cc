// Both daemons' /metrics parse as the Prometheus text format: with
// `promtool check metrics` where it is installed, and always with the checker below (the
// format's line grammar, TYPE before samples, counters named *_total, histogram buckets
// cumulative with an +Inf bucket and _sum/_count). The real opmap-collector and
// opmap-agent, scraped over HTTP.
#include <unistd.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

// What is wrong with `text` as Prometheus exposition text; empty when nothing. `values`
// gets each sample's value by its full name with labels ("name{k=\"v\"}").
std::vector<std::string> CheckExposition(const std::string& text,
                                         std::map<std::string, double>* values) {
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*)?\})? (\S+))");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)");
  std::vector<std::string> errors;
  std::map<std::string, std::string> types;
  std::map<std::string, std::vector<double>> buckets;  // family -> cumulative counts
  if (text.empty() || text.back() != '\n') errors.push_back("does not end in a newline");
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_no;
    const std::string line(raw);
    std::smatch m;
    if (line[0] == '#') {
      if (std::regex_match(line, m, kType)) {
        if (types.count(m[1])) errors.push_back(absl::StrCat(line_no, ": second TYPE: ", line));
        types[m[1]] = m[2];
      } else if (!std::regex_match(line, kHelp)) {
        errors.push_back(absl::StrCat(line_no, ": bad comment: ", line));
      }
      continue;
    }
    if (!std::regex_match(line, m, kSample)) {
      errors.push_back(absl::StrCat(line_no, ": not `name{labels} value`: ", line));
      continue;
    }
    const std::string name = m[1];
    double v = 0;
    const std::string value = m[m.size() - 1];
    if (value == "+Inf") {
      v = INFINITY;
    } else if (!absl::SimpleAtod(value, &v)) {
      errors.push_back(absl::StrCat(line_no, ": value '", value, "'"));
    }
    (*values)[line.substr(0, line.rfind(' '))] = v;
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (absl::EndsWith(name, suffix) && types.count(name.substr(0, name.size() - strlen(suffix))) &&
          types[name.substr(0, name.size() - strlen(suffix))] == "histogram") {
        family = name.substr(0, name.size() - strlen(suffix));
      }
    }
    auto t = types.find(family);
    if (t == types.end()) {
      errors.push_back(absl::StrCat(line_no, ": sample before its TYPE: ", line));
      continue;
    }
    if (t->second == "counter" && !absl::EndsWith(name, "_total")) {
      errors.push_back(absl::StrCat(line_no, ": counter not named *_total: ", name));
    }
    if (t->second == "counter" && v < 0) errors.push_back(absl::StrCat(line_no, ": negative counter"));
    if (absl::EndsWith(name, "_bucket") && family != name) buckets[family].push_back(v);
  }
  for (const auto& [family, counts] : buckets) {
    for (size_t i = 1; i < counts.size(); ++i) {
      if (counts[i] < counts[i - 1]) errors.push_back(family + ": buckets not cumulative");
    }
    if (!values->count(family + "_bucket{le=\"+Inf\"}")) errors.push_back(family + ": no +Inf bucket");
    if (!values->count(family + "_count") || !values->count(family + "_sum")) {
      errors.push_back(family + ": no _sum or _count");
    } else if (!counts.empty() && (*values)[family + "_count"] != counts.back()) {
      errors.push_back(family + ": _count is not the +Inf bucket");
    }
  }
  return errors;
}

// promtool's verdict where it is installed ("" when it is not, or when it passes).
std::string Promtool(const std::string& text, const std::string& dir) {
  if (access("/usr/bin/promtool", X_OK) != 0) return "";
  WriteFileOrDie(dir + "/metrics.txt", text);
  RunResult r = Run({"/bin/sh", "-c", "/usr/bin/promtool check metrics < \"$0\"", dir + "/metrics.txt"}, dir);
  return r.exit_code == 0 ? "" : r.out + r.err;
}

TEST(MetricsExposition, TheCheckerCatchesWhatItMust) {
  std::map<std::string, double> v;
  EXPECT_TRUE(CheckExposition("# TYPE a_total counter\na_total 1\n", &v).empty());
  EXPECT_FALSE(CheckExposition("# TYPE a counter\na 1\n", &v).empty());           // not _total
  EXPECT_FALSE(CheckExposition("a_total 1\n", &v).empty());                         // no TYPE
  EXPECT_FALSE(CheckExposition("# TYPE a gauge\na{x=1} 1\n", &v).empty());         // unquoted
  EXPECT_FALSE(CheckExposition("# TYPE a gauge\na one\n", &v).empty());            // value
  EXPECT_FALSE(CheckExposition("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                               "h_sum 1\nh_count 1\n", &v).empty());                // not cumulative
}

TEST(MetricsExposition, CollectorMetricsParse) {
  TempDir dir;
  CollectorProcess::Options options;
  options.dir = dir.path();
  CollectorProcess collector(options);
  ASSERT_TRUE(collector.Start().ok()) << collector.Log();
  WriteFileOrDie(dir.File("t.json"),
                 R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, )"
                 R"("tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7}}]})");
  RunResult imported = Opmap({"import", dir.File("t.json"), "--collector", collector.address(),
                              "--token", kAgentToken}, dir.path());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const std::string text = HttpGet(collector.metrics_address(), "/metrics");
  std::map<std::string, double> values;
  EXPECT_THAT(CheckExposition(text, &values), ::testing::IsEmpty()) << text;
  EXPECT_EQ(Promtool(text, dir.path()), "");
  EXPECT_EQ(values["opmap_collector_batches_total"], 1) << text;
  EXPECT_EQ(values["opmap_collector_store_commit_seconds_count"], 1) << text;
  EXPECT_EQ(values["opmap_collector_rejected_total{code=\"too_large\"}"], 0) << text;
  // The import's stream is closed, but its agent sent a batch just now.
  EXPECT_EQ(values["opmap_collector_ingest_streams"], 0) << text;
  EXPECT_EQ(values["opmap_collector_agents_active"], 1) << text;
}

TEST(MetricsExposition, AgentMetricsParseAndMatchItsStatus) {
  TempDir dir;
  AgentProcess agent(dir.path(), {"--metrics-listen", "127.0.0.1:0", "--cpu-budget", "0.25",
                                  "--capture-every", "1h"});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  std::string address;
  for (absl::string_view line : absl::StrSplit(ReadFileOrEmpty(dir.File("agent1.out")), '\n')) {
    if (absl::ConsumePrefix(&line, "metrics on ")) address = std::string(line);
  }
  ASSERT_FALSE(address.empty()) << ReadFileOrEmpty(dir.File("agent1.out"));
  const std::string text = HttpGet(address, "/metrics");
  std::map<std::string, double> values;
  EXPECT_THAT(CheckExposition(text, &values), ::testing::IsEmpty()) << text;
  EXPECT_EQ(Promtool(text, dir.path()), "");
  EXPECT_EQ(values["opmap_agent_cpu_budget_cores"], 0.25) << text;
  EXPECT_EQ(values["opmap_agent_processes"], 0) << text;
  EXPECT_EQ(values["opmap_agent_windows_total"], 0) << text;
  EXPECT_TRUE(values.count("opmap_agent_upload_dropped_batches_total{cause=\"spool full\"}")) << text;
  EXPECT_TRUE(values.count("opmap_agent_registrations_refused_total{reason=\"foreign\"}")) << text;
  EXPECT_EQ(agent.Stop(), 0) << agent.Log();
}

}  // namespace
}  // namespace opmap::testing
