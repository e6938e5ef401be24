// Power end to end with real processes: two demo workloads on two GPUs of the test NVML
// library (tests/power/, dlopened by the agent as it would open libnvidia-ml.so.1), each
// process naming its GPU by CUDA_VISIBLE_DEVICES, under one agent streaming to one
// collector; `opmap query power` gives each revision its own GPU at that GPU's scripted
// draw. Then the `unavailable` path: an agent whose NVML cannot be loaded says why.
#include <simdjson.h>

#include <map>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/e2e/fake_boards.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

struct PowerRowJson {
  std::string revision, device, name, domain;
  int64_t windows_with_energy = 0, limit_min_mw = -1;
  double average_w = -1;
};

class PowerEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CollectorProcess>> collector =
        StartCollectorWithAgentToken(dir_);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_ = *std::move(collector);
    // Two boards drawing steadily (the energy counter advances at that power over time).
    WriteFileOrDie(dir_.File("nvml.script"), kTwoBoardsNvmlScript);
  }
  std::vector<std::string> AgentFlags(const std::string& nvml) {
    return {"--collector", collector_->address(), "--insecure", "--token-file",
            dir_.File("agent.token"), "--capture-window", "40s", "--capture-every", "60s",
            "--nvml-library", nvml, "--powercap-root", dir_.File("no-powercap"),
            "--power-interval", "50ms"};
  }
  void StartDemo(Child& demo, const std::string& agent_socket, const std::string& revision,
                 const std::string& visible) {
    std::vector<std::string> env = InjectEnv(agent_socket);
    env.push_back("OPMAP_INIT_WAIT_MS=5000");  // captured from its first request
    env.push_back("OPMAP_MODEL=demo-power");
    env.push_back("OPMAP_MODEL_REVISION=" + revision);
    env.push_back("CUDA_VISIBLE_DEVICES=" + visible);
    ASSERT_TRUE(demo.Start({DemoBin(), "--requests", "150", "--rate", "100", "--json"},
                           dir_.File(revision + ".out"), dir_.File(revision + ".err"), env)
                    .ok());
  }
  // `opmap query power --group-by revision --format json` until `rows` GPU rows are in.
  std::vector<PowerRowJson> QueryPower(size_t rows, std::string* raw) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    std::vector<PowerRowJson> out;
    while (true) {
      RunResult r = opmap::testing::Run(
          {OpmapBin(), "query", "power", "--collector", collector_->address(), "--group-by",
           "revision", "--format", "json"},
          dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken}, absl::Seconds(30));
      *raw = r.out;
      out.clear();
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      if (r.exit_code == 0 && parser.parse(r.out).get(doc) == simdjson::SUCCESS) {
        for (simdjson::dom::element row : doc["rows"].get_array()) {
          PowerRowJson p;
          p.revision = std::string(row["revision"].get_string().value_unsafe());
          p.device = std::string(row["device"].get_string().value_unsafe());
          p.name = std::string(row["name"].get_string().value_unsafe());
          p.domain = std::string(row["domain"].get_string().value_unsafe());
          p.windows_with_energy = row["windows_with_energy"].get_int64().value_unsafe();
          double w = 0;
          if (row["average_w"].get(w) == simdjson::SUCCESS) p.average_w = w;
          int64_t limit = 0;
          if (row["power_limit_min_mw"].get(limit) == simdjson::SUCCESS) p.limit_min_mw = limit;
          out.push_back(p);
        }
      }
      if (out.size() >= rows || absl::Now() > deadline) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

TEST_F(PowerEndToEnd, EachProcessGetsItsOwnGpuAtItsDraw) {
  AgentProcess agent(dir_.path(), AgentFlags(OPMAP_FAKE_NVML));
  ASSERT_TRUE(agent.StartWith({"OPMAP_FAKE_NVML_SCRIPT=" + dir_.File("nvml.script")}).ok())
      << agent.Log();
  Child a, b;
  StartDemo(a, agent.socket(), "plat-a", "0");                // by ordinal
  StartDemo(b, agent.socket(), "plat-b", "GPU-bbbb");         // by UUID prefix
  EXPECT_EQ(a.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("plat-a.err"));
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("plat-b.err"));
  std::string raw;
  const std::vector<PowerRowJson> rows = QueryPower(2, &raw);
  ASSERT_EQ(rows.size(), 2u) << raw << agent.Log();
  std::map<std::string, PowerRowJson> by_revision;
  for (const PowerRowJson& r : rows) by_revision[r.revision] = r;
  const PowerRowJson& pa = by_revision["plat-a"];
  const PowerRowJson& pb = by_revision["plat-b"];
  EXPECT_EQ(pa.device, "GPU-aaaa0001") << raw;
  EXPECT_EQ(pa.name, "Fake H100");
  EXPECT_EQ(pa.domain, "gpu");
  EXPECT_EQ(pa.windows_with_energy, 1);
  EXPECT_EQ(pa.limit_min_mw, 700000);
  EXPECT_EQ(pb.device, "GPU-bbbb0002") << raw;
  EXPECT_EQ(pb.limit_min_mw, 350000);
  // The scripted draw, through dlopen, the monitor's reads, the wire, the store and the
  // query: within 1 % (reads are stamped by CLOCK_REALTIME, the fake counts CLOCK_MONOTONIC).
  EXPECT_NEAR(pa.average_w, 400.0, 4.0) << raw;
  EXPECT_NEAR(pb.average_w, 200.0, 2.0) << raw;
  // No RAPL on the fixture root: the reason, not a zero.
  EXPECT_TRUE(absl::StrContains(raw, "\"what\":\"power cpu\"")) << raw;
  EXPECT_TRUE(absl::StrContains(raw, "RAPL: ")) << raw;

  // The release report compares the two as arms: the same requests at the same rate on
  // half the power is twice the requests per joule; the power mode is an input.
  RunResult report = opmap::testing::Run(
      {OpmapBin(), "report", "--collector", collector_->address(), "--baseline", "plat-a",
       "--candidate", "plat-b", "--format", "json", "--output", dir_.File("report.json")},
      dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken}, absl::Seconds(60));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string json = ReadFileOrEmpty(dir_.File("report.json"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element rec = doc["recommendation"];
  const double base_w = rec["baseline"]["gpu_watts"].get_double().value_unsafe();
  const double cand_w = rec["candidate"]["gpu_watts"].get_double().value_unsafe();
  EXPECT_NEAR(base_w, 400.0, 4.0) << json;
  EXPECT_NEAR(cand_w, 200.0, 2.0) << json;
  bool row_seen = false;
  simdjson::dom::array matrix = rec["matrix"].get_array().value_unsafe();
  for (simdjson::dom::element row : matrix) {
    if (std::string_view(row["metric"].get_string().value_unsafe()) != "perf per watt") continue;
    row_seen = true;
    const double b = row["baseline"].get_double().value_unsafe();
    const double k = row["candidate"].get_double().value_unsafe();
    const double b_rps = rec["baseline"]["throughput_rps"].get_double().value_unsafe();
    // Requests per joule, within the rounding of the printed throughput and watts.
    EXPECT_NEAR(b, b_rps / base_w, b * 1e-4) << json;
    EXPECT_NEAR(k / b, 2.0, 0.1) << json;
    EXPECT_EQ(std::string_view(row["status"].get_string().value_unsafe()), "pass") << json;
  }
  EXPECT_TRUE(row_seen) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"baseline.power.gpu\":\"Fake H100\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"candidate.power.limit_w\":\"350\"")) << json;
  EXPECT_EQ(agent.Stop(), 0);
}

TEST_F(PowerEndToEnd, WithoutNvmlTheQuerySaysWhyAndPrintsNoFigure) {
  AgentProcess agent(dir_.path(), AgentFlags(dir_.File("lib/libnvidia-ml.so.1")));
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  Child a;
  StartDemo(a, agent.socket(), "plat-a", "0");
  EXPECT_EQ(a.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("plat-a.err"));
  // The window's batches arrive after the process ends; wait for the session.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  RunResult r;
  while (absl::Now() < deadline) {
    r = opmap::testing::Run({OpmapBin(), "query", "power", "--collector", collector_->address()},
                            dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
    if (absl::StrContains(r.out, "power gpu")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "power: no rows")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "unavailable: power gpu: NVML: ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "libnvidia-ml.so.1")) << r.out;
  EXPECT_EQ(agent.Stop(), 0);
}

}  // namespace
}  // namespace opmap::testing
