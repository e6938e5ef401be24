// The whole path with real processes: the demo workload loads libopmap_inject.so, the
// agent captures it and streams to the collector, and `opmap query` answers — checked
// against the workload's own numbers. Then the same with the collector SIGKILLed
// mid-run and the agent SIGKILLed with batches in its spool: nothing lost, nothing twice.
#include <signal.h>

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

constexpr int kRequests = 300;

struct DemoTruth {
  int64_t requests = 0;
  std::map<std::string, int64_t> ranges;  // range name → count, the demo's own
  // Per request, from --request-log: the least and the most its NVTX range can have lasted
  // (the clock read just inside and just outside each of the two NVTX calls).
  std::vector<int64_t> shortest_ns, longest_ns;
};

// The demo's own latency runs from its arrival clock read, before the NVTX start call, to a
// read before the end call: on a loaded host a preemption between those reads puts
// milliseconds the range never saw into the demo's tail. The request log brackets what the
// range itself measured, so the collector's figure is checked against that.
void ParseRequestLog(const std::string& text, DemoTruth* t) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    unsigned long long id = 0;
    long long start_before = 0, start_after = 0, end_before = 0, end_after = 0;
    if (std::sscanf(line.c_str(), "%llu %lld %lld %lld %lld", &id, &start_before, &start_after,
                    &end_before, &end_after) != 5) {
      ADD_FAILURE() << "request log line: " << line;
      continue;
    }
    t->shortest_ns.push_back(end_before - start_after);
    t->longest_ns.push_back(end_after - start_before);
  }
  std::sort(t->shortest_ns.begin(), t->shortest_ns.end());
  std::sort(t->longest_ns.begin(), t->longest_ns.end());
}

DemoTruth ParseDemo(const std::string& json) {
  DemoTruth t;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << "demo output is not JSON: " << json;
    return t;
  }
  t.requests = doc["requests"].get_int64().value_unsafe();
  simdjson::dom::object ranges;
  if (doc["ranges"].get(ranges) != simdjson::SUCCESS) {
    ADD_FAILURE() << "demo output has no ranges: " << json;
    return t;
  }
  for (simdjson::dom::key_value_pair field : ranges) {
    int64_t n = 0;
    if (field.value.get(n) == simdjson::SUCCESS) t.ranges[std::string(field.key)] = n;
  }
  return t;
}

class EndToEnd : public ::testing::Test {
 protected:
  void StartCollector() {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    collector_ = std::make_unique<CollectorProcess>(options);
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
    WriteFileOrDie(dir_.File("agent.token"), std::string(kAgentToken) + "\n");
  }
  // One window longer than the whole run: the workload's every request is captured. Small
  // chunks (~10k records in the run) exercise the conversion while the window is open.
  std::vector<std::string> AgentFlags() {
    return {"--collector", collector_->address(), "--insecure", "--token-file",
            dir_.File("agent.token"), "--capture-window", "40s", "--capture-every", "60s",
            "--chunk-records", "700"};
  }
  // Runs the demo to completion under the library; returns its own numbers.
  DemoTruth RunDemo(const std::string& agent_socket) {
    std::vector<std::string> env = InjectEnv(agent_socket);
    env.push_back("OPMAP_INIT_WAIT_MS=5000");  // captured from its first request
    env.push_back("OPMAP_MODEL=demo-e2e");
    env.push_back("OPMAP_MODEL_REVISION=r1");
    Child demo;
    EXPECT_TRUE(demo.Start({DemoBin(), "--requests", std::to_string(kRequests), "--rate", "100",
                            "--json", "--request-log", dir_.File("requests.log")},
                           dir_.File("demo.out"), dir_.File("demo.err"), env)
                    .ok());
    EXPECT_EQ(demo.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("demo.err"));
    DemoTruth truth = ParseDemo(ReadFileOrEmpty(dir_.File("demo.out")));
    ParseRequestLog(ReadFileOrEmpty(dir_.File("requests.log")), &truth);
    return truth;
  }
  // `opmap query latency --subject S --group-by G`, waiting until `min_count` rows'
  // counts have arrived (the agent streams after the window closes).
  LatencyResult Query(const std::string& subject, const std::string& group_by,
                      int64_t min_total, absl::Duration timeout = absl::Seconds(30)) {
    LatencyResult result;
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      std::vector<std::string> argv = {OpmapBin(), "query", "latency", "--collector",
                                       collector_->address(), "--subject", subject,
                                       "--format", "json"};
      if (!group_by.empty()) argv.insert(argv.end(), {"--group-by", group_by});
      RunResult r = opmap::testing::Run(argv, dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken},
                        absl::Seconds(30));
      result = {};
      int64_t total = 0;
      if (r.exit_code == 0 &&
          ParseLatencyJson(r.out, group_by.empty() ? std::vector<std::string>{}
                                                   : std::vector<std::string>{group_by},
                           {"p50", "p95", "p99"}, &result)) {
        for (const LatencyRow& row : result.rows) total += row.count;
      }
      if (total >= min_total || absl::Now() > deadline) return result;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  void ExpectMatchesTheWorkload(const DemoTruth& truth) {
    ASSERT_EQ(truth.requests, kRequests);
    LatencyResult requests = Query("request", "", kRequests);
    ASSERT_EQ(requests.rows.size(), 1u);
    EXPECT_EQ(requests.rows[0].count, kRequests);  // every request once: none lost, none twice
    // The sketch answers for the order statistic at floor(0.99 · (n − 1)) within its α
    // (docs/metrics.md). Each range lasted between its request's shortest and longest, so
    // that order statistic lies between theirs; 500 ppm more for a slewing clock.
    ASSERT_EQ(truth.shortest_ns.size(), size_t(kRequests));
    const size_t rank = size_t(0.99 * double(kRequests - 1));
    const double alpha = requests.relative_accuracy + 500e-6;
    const double p99 = requests.rows[0].quantile_ns[2];
    EXPECT_GE(p99, double(truth.shortest_ns[rank]) * (1 - alpha));
    EXPECT_LE(p99, double(truth.longest_ns[rank]) * (1 + alpha));
    std::cout << "collector p99 " << p99 << " ns; the ranges' p99 lies in ["
              << truth.shortest_ns[rank] << ", " << truth.longest_ns[rank] << "] ns\n";
    LatencyResult ops = Query("operator-cpu", "operator", 1);
    std::map<std::string, int64_t> counts;
    for (const LatencyRow& row : ops.rows) counts[row.key[0]] = row.count;
    for (const auto& [name, n] : truth.ranges) {
      if (name == "request") continue;  // a request range, not an operator
      EXPECT_EQ(counts[name], n) << name;
    }
    EXPECT_EQ(counts.size(), truth.ranges.size() - 1) << "truth has " << truth.ranges.size();
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

TEST_F(EndToEnd, CollectorRequestP99AndPerLayerCountsMatchTheWorkload) {
  StartCollector();
  AgentProcess agent(dir_.path(), AgentFlags());
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  const DemoTruth truth = RunDemo(agent.socket());
  ExpectMatchesTheWorkload(truth);
  // Counters arrived with the window: perf software counters here, PAPI named unavailable
  // where there is no PMU.
  RunResult counters = opmap::testing::Run({OpmapBin(), "query", "counters", "--collector",
                            collector_->address()},
                           dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
  ASSERT_EQ(counters.exit_code, 0) << counters.err;
  EXPECT_NE(counters.out.find("perf::TASK-CLOCK"), std::string::npos) << counters.out;
  EXPECT_EQ(agent.Stop(), 0);
}

TEST_F(EndToEnd, CollectorAndAgentKilledNothingLostNothingDuplicated) {
  StartCollector();
  const int collector_pid = collector_->pid();
  AgentProcess agent(dir_.path(), AgentFlags());
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  // The collector dies while the workload runs; the window closes with it down.
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    collector_->Kill();
  });
  const DemoTruth truth = RunDemo(agent.socket());
  killer.join();
  ASSERT_NE(collector_pid, 0);
  // The window's batches wait in the outbox; then the agent dies too (SIGKILL): they
  // must come back from its disk spool.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string status;
  // Wait until the whole window is queued and on disk (the window's last batches come
  // when the workload exits; the uploader spills when the stream breaks).
  while (absl::Now() < deadline) {
    status = agent.StatusJson();
    if (status.find("\"windows_total\":1,") != std::string::npos &&
        status.find("\"memory_batches\":0,") != std::string::npos &&
        status.find("\"spool_bytes\":0,") == std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_NE(status.find("\"memory_batches\":0,"), std::string::npos) << status;
  ASSERT_EQ(status.find("\"spool_bytes\":0,"), std::string::npos) << status;
  agent.Kill();
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();  // same spool dir
  ExpectMatchesTheWorkload(truth);
  // And again after yet another restart of both: still exactly once.
  agent.Kill();
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  LatencyResult again = Query("request", "", kRequests);
  ASSERT_EQ(again.rows.size(), 1u);
  EXPECT_EQ(again.rows[0].count, kRequests);
  EXPECT_EQ(agent.Stop(), 0);
}

// The production path: the agent streams over mutual TLS with its token.
TEST_F(EndToEnd, AgentStreamsOverMutualTls) {
  if (!HaveOpenssl()) GTEST_SKIP() << "the openssl CLI is not installed";
  std::string log;
  ASSERT_TRUE(MakeCertificates(dir_.path(), &log)) << log;
  const std::string d = dir_.path() + "/";
  collector_ = std::make_unique<CollectorProcess>(CollectorProcess::Options{
      dir_.path(), "", "127.0.0.1:0",
      {"--tls-cert", d + "server.pem", "--tls-key", d + "server.key", "--tls-client-ca",
       d + "ca.pem"}});
  ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  WriteFileOrDie(dir_.File("agent.token"), std::string(kAgentToken) + "\n");
  AgentProcess agent(dir_.path(), {"--collector", collector_->address(), "--token-file",
                                   dir_.File("agent.token"), "--tls-ca", d + "ca.pem",
                                   "--tls-cert", d + "client.pem", "--tls-key",
                                   d + "client.key", "--capture-window", "40s",
                                   "--capture-every", "60s"});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  const DemoTruth truth = RunDemo(agent.socket());
  ASSERT_EQ(truth.requests, kRequests);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  RunResult q;
  while (absl::Now() < deadline) {
    q = opmap::testing::Run({OpmapBin(), "query", "latency", "--subject", "request",
                             "--collector", collector_->address(), "--tls-ca", d + "ca.pem",
                             "--tls-cert", d + "client.pem", "--tls-key", d + "client.key",
                             "--format", "csv"},
                            dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
    if (q.exit_code == 0 && q.out.find("\n300,") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_NE(q.out.find("\n300,"), std::string::npos) << q.out << q.err << agent.StatusJson();
  EXPECT_NE(agent.StatusJson().find("\"collector\":\"connected to "), std::string::npos);
  EXPECT_EQ(agent.Stop(), 0);
}

}  // namespace
}  // namespace opmap::testing
