// `opmap query` as a user runs it against the real `opmap-collector` on 127.0.0.1: the
// table and CSV forms, what the collector cannot answer, a request it refuses, and a
// collector slow to answer the handshake.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/collector_fixture.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing::collector_query_cli_test {
namespace {

using ::testing::HasSubstr;

class CollectorQueryCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    collector_ = std::make_unique<CollectorProcess>(options);
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  }
  std::vector<std::string> Conn(const std::string& token) {
    return {"--collector", collector_->address(), "--token", token};
  }
  RunResult Import(const std::string& path, std::vector<std::string> extra) {
    std::vector<std::string> args = {"import", path, "--quiet"};
    for (auto& a : Conn(kAgentToken)) args.push_back(a);
    for (auto& a : extra) args.push_back(a);
    return Opmap(args, dir_.path());
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

TEST_F(CollectorQueryCliTest, QueryTableCsvAndUnavailable) {
  const std::string name = "tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED("traces/" + name);
  RunResult imp = Import(SharedPath("traces/" + name), {"--revision", "r7"});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  auto query = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "query");
    for (auto& a : Conn(kAnalystToken)) args.push_back(a);
    return Opmap(args, dir_.path());
  };
  // Table: the header states the sketch's α; µs with 3 decimals, as analyze prints.
  RunResult t = query({"latency", "--group-by", "layer_type", "--revision", "r7"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("percentiles from DDSketch, relative error ≤ 0.54%"));
  EXPECT_THAT(t.out, HasSubstr("layer_type"));
  EXPECT_THAT(t.out, HasSubstr("197.598"));  // matmul GPU time, as `opmap analyze` says
  // CSV: one header, one line per row.
  RunResult c = query({"latency", "--of", "operator", "--group-by", "operator", "--format",
                       "csv", "--quantiles", "0.5,0.999"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.out, ::testing::StartsWith(
                         "operator,count,total_us,share,min_us,p50_us,p99.9_us,max_us\n"));
  EXPECT_THAT(c.out, HasSubstr("aten::addmm,26,197.598,0."));
  // What the collector cannot answer says so, never a zero.
  RunResult u = query({"latency", "--group-by", "request"});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  EXPECT_THAT(u.out, HasSubstr("unavailable: "));
  RunResult none = query({"latency", "--revision", "no-such-revision"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("no rows"));
  // A request the collector refuses: INVALID_ARGUMENT, one line, exit 2.
  RunResult bad = query({"latency", "--of", "operator", "--group-by", "kernel"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, ::testing::StartsWith("opmap query: INVALID_ARGUMENT: "));
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  // --since: an imported 2025 trace is older than an hour.
  RunResult recent = query({"kernels", "--since", "1h"});
  ASSERT_EQ(recent.exit_code, 0) << recent.err;
  EXPECT_THAT(recent.out, HasSubstr("no rows"));
}

// A collector slow to finish the handshake (a loaded host, TLS over a long link) is waited
// for: a connection attempt gets 10 s (it got 100 ms, and failed here). Stopped, the
// collector's kernel still accepts the connection but nothing answers until SIGCONT.
TEST_F(CollectorQueryCliTest, QueryWaitsForACollectorSlowToAnswer) {
  ASSERT_EQ(kill(collector_->pid(), SIGSTOP), 0);
  Child query;
  std::vector<std::string> argv = {OpmapBin(), "query", "latency"};
  for (auto& a : Conn(kAnalystToken)) argv.push_back(a);
  ASSERT_TRUE(query.Start(argv, dir_.File("slow.out"), dir_.File("slow.err")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const bool still_waiting = query.running();
  ASSERT_EQ(kill(collector_->pid(), SIGCONT), 0);
  EXPECT_TRUE(still_waiting) << ReadFileOrEmpty(dir_.File("slow.err"));
  EXPECT_EQ(query.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("slow.err"));
  EXPECT_THAT(ReadFileOrEmpty(dir_.File("slow.out")), HasSubstr("no rows"));
}

}  // namespace
}  // namespace opmap::testing::collector_query_cli_test
