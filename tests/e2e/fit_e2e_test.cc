// The workload fit end to end with real processes: two demo workloads as two platforms —
// each on its own GPU of the test NVML library (CUDA_VISIBLE_DEVICES), so the agent labels
// their windows gpu_name "Fake H100" (700 W limit, 400 W draw) and "Fake L40S" (350 W,
// 200 W), the second serving with a slower layer — under one agent, each driven up the
// same ladder of offered rates, one process (one capture window) per step. `opmap report
// --arms gpu_name` must name as best the platform that meets the SLA at the higher rate,
// put each knee within one ladder step of where the demo's own exact p99 breaks the SLA,
// give perf per watt at the knee from the scripted draw, and render its curves and the
// perf-per-watt plot in Chromium.
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/e2e/fake_boards.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/chromium.h"

namespace opmap::testing {
namespace {

constexpr double kFitSlaMs = 15;
const std::vector<double> kFitLadder = {75, 150, 300, 450};

constexpr char kFitProfile[] = R"(model = opmap-demo
parameters = 396544
layers = 2
heads = 4
head_dim = 32
hidden = 128
precision = fp32
prefill_tokens = 32
sla_p99_ms = 15
)";

struct Platform {
  std::string gpu;          // the test NVML's name, as the agent labels it
  std::string visible;      // CUDA_VISIBLE_DEVICES
  std::vector<std::string> flags;
  double watts;             // the scripted draw
};

class FitEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CollectorProcess>> collector =
        StartCollectorWithAgentToken(dir_);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_ = *std::move(collector);
    WriteFileOrDie(dir_.File("fit.profile"), kFitProfile);
    WriteFileOrDie(dir_.File("nvml.script"), kTwoBoardsNvmlScript);
  }

  // One demo process at `rate` for 2 s; its own exact p99 (ms) from --json.
  double RunStep(AgentProcess& agent, const Platform& p, double rate, int step) {
    const std::string name = absl::StrCat(p.visible, "-", step);
    std::vector<std::string> env = InjectEnv(agent.socket());
    env.push_back("OPMAP_INIT_WAIT_MS=5000");
    env.push_back("OPMAP_MODEL=demo-fit");
    env.push_back("OPMAP_MODEL_REVISION=r1");
    env.push_back("CUDA_VISIBLE_DEVICES=" + p.visible);
    std::vector<std::string> argv = {DemoBin(), "--json", "--workers", "1", "--rate",
                                     absl::StrCat(rate), "--duration", "2"};
    argv.insert(argv.end(), p.flags.begin(), p.flags.end());
    Child demo;
    EXPECT_TRUE(demo.Start(argv, dir_.File(name + ".out"), dir_.File(name + ".err"), env).ok());
    EXPECT_EQ(demo.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File(name + ".err"));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    const std::string out = ReadFileOrEmpty(dir_.File(name + ".out"));
    if (parser.parse(out).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << "demo output: " << out;
      return -1;
    }
    return doc["latency_ms"]["p99"].get_double().value_unsafe();
  }

  // Waits until `n` request windows are stored and the count held for 2 s.
  void WaitForWindows(size_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    size_t last = 0;
    absl::Time stable_since = absl::Now();
    while (absl::Now() < deadline) {
      RunResult r = opmap::testing::Run(
          {OpmapBin(), "query", "latency", "--collector", collector_->address(), "--subject",
           "request", "--group-by", "session", "--format", "json"},
          dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken}, absl::Seconds(30));
      LatencyResult result;
      size_t windows = 0;
      if (r.exit_code == 0 && ParseLatencyJson(r.out, {"session"}, {"p50", "p95", "p99"}, &result)) {
        windows = result.rows.size();
      }
      if (windows != last) {
        last = windows;
        stable_since = absl::Now();
      } else if (windows >= n && absl::Now() - stable_since > absl::Seconds(2)) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    FAIL() << "windows stored: " << last << " of " << n;
  }

  RunResult Report(const std::string& format, const std::string& out) {
    return opmap::testing::Run({OpmapBin(), "report", "--collector", collector_->address(), "--arms",
                                "gpu_name", "--profile", dir_.File("fit.profile"), "--format",
                                format, "--output", dir_.File(out)},
                               dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken},
                               absl::Seconds(120));
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

// The ladder index of the highest rate whose whole-run p99 is at most `limit_ms`; -1 for none.
int HighestStepWithin(const std::vector<double>& p99_ms, double limit_ms) {
  int knee = -1;
  for (size_t i = 0; i < p99_ms.size(); ++i) {
    if (p99_ms[i] >= 0 && p99_ms[i] <= limit_ms) knee = static_cast<int>(i);
  }
  return knee;
}
// The highest step every capture window of it meets the SLA at: its run clear of it by 25%.
int ClearKnee(const std::vector<double>& p99_ms) {
  return HighestStepWithin(p99_ms, 0.75 * kFitSlaMs);
}
// The highest step a capture window of it may meet the SLA at: its run within 25% of it.
int PossibleKnee(const std::vector<double>& p99_ms) {
  return HighestStepWithin(p99_ms, 1.25 * kFitSlaMs);
}

// The ladder index whose rate is nearest to `rps`.
int NearestStep(double rps) {
  int best = 0;
  for (size_t i = 1; i < kFitLadder.size(); ++i) {
    if (std::abs(kFitLadder[i] - rps) < std::abs(kFitLadder[best] - rps)) best = static_cast<int>(i);
  }
  return best;
}

TEST_F(FitEndToEnd, TheFitNamesThePlatformThatMeetsTheSlaAtTheHigherRate) {
  AgentProcess agent(dir_.path(),
                     {"--collector", collector_->address(), "--insecure", "--token-file",
                      dir_.File("agent.token"), "--capture-window", "20s", "--capture-every",
                      "60s", "--nvml-library", OPMAP_FAKE_NVML, "--powercap-root",
                      dir_.File("no-powercap"), "--power-interval", "100ms"});
  ASSERT_TRUE(agent.StartWith({"OPMAP_FAKE_NVML_SCRIPT=" + dir_.File("nvml.script")}).ok())
      << agent.Log();
  const std::vector<Platform> platforms = {
      {"Fake H100", "0", {}, 400},
      // Slow enough to miss the SLA at 150 req/s by far (p99 ~40 ms on the 2-core VM)
      // while the other meets it by far (~8 ms): the ladder separates them under load.
      {"Fake L40S", "1", {"--slow-layer", "1", "--slow-repeat", "24"}, 200}};
  std::map<std::string, std::vector<double>> demo_p99;
  for (size_t step = 0; step < kFitLadder.size(); ++step) {
    for (const Platform& p : platforms) {
      demo_p99[p.gpu].push_back(RunStep(agent, p, kFitLadder[step], static_cast<int>(step)));
    }
  }
  WaitForWindows(kFitLadder.size() * platforms.size());

  RunResult report = Report("json", "fit.json");
  ASSERT_EQ(report.exit_code, 0) << report.err << agent.Log();
  const std::string json = ReadFileOrEmpty(dir_.File("fit.json"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element fit = doc["fit"];
  std::map<std::string, simdjson::dom::element> rows;
  for (simdjson::dom::element row : fit["rows"].get_array()) {
    rows[std::string(row["arm"].get_string().value_unsafe())] = row;
  }
  ASSERT_EQ(rows.size(), 2u) << json;

  // Which platform the demos' own logs say meets the SLA at the higher rate. A capture
  // window's p99 and the whole run's fall on either side of the SLA by load alone near it
  // (once under test.sh a window's p99 was 17.4 ms against the SLA's 15 while the whole
  // run met it), so a platform's knee is only known to lie between the highest step whose
  // run is clear of the SLA (ClearKnee) and the highest step within reach of it
  // (PossibleKnee).
  const std::vector<double>& fast = demo_p99["Fake H100"];
  const std::vector<double>& slow = demo_p99["Fake L40S"];
  std::cout << "demo p99 (ms) by step of " << absl::StrJoin(kFitLadder, ", ")
            << " req/s: Fake H100 " << absl::StrJoin(fast, ", ") << "; Fake L40S "
            << absl::StrJoin(slow, ", ") << "\n";
  if (ClearKnee(fast) <= PossibleKnee(slow)) {
    GTEST_SKIP() << "the demos' own p99s did not separate the platforms (Fake H100 "
                 << absl::StrJoin(fast, ", ") << " ms, Fake L40S " << absl::StrJoin(slow, ", ")
                 << " ms): the machine was too loaded for this ladder";
  }
  EXPECT_EQ(std::string_view(fit["best"].get_string().value_unsafe()), "gpu_name=Fake H100") << json;
  EXPECT_EQ(std::string_view(fit["runner_up"].get_string().value_unsafe()), "gpu_name=Fake L40S");
  // The runner-up is rejected with its reason: a lower knee, or no knee at all.
  EXPECT_EQ(fit["rejected"].get_array().size(), 1u);
  EXPECT_EQ(std::string(fit["rejected"].at(0).get_string().value_unsafe()).rfind("gpu_name=Fake L40S: ", 0), 0u)
      << json;

  for (const Platform& p : platforms) {
    simdjson::dom::element row = rows["gpu_name=" + p.gpu];
    const int clear = ClearKnee(demo_p99[p.gpu]);
    const int possible = PossibleKnee(demo_p99[p.gpu]);
    double knee_rps = 0;
    const bool has_knee = row["knee_rps"].get(knee_rps) == simdjson::SUCCESS;
    if (clear >= 0) {
      EXPECT_TRUE(has_knee) << p.gpu << ": " << json;
    }
    if (possible < 0) {
      EXPECT_FALSE(has_knee) << p.gpu << ": " << json;
    }
    if (!has_knee) continue;
    EXPECT_GE(NearestStep(knee_rps), clear) << p.gpu << ": collector knee " << knee_rps;
    EXPECT_LE(NearestStep(knee_rps), possible) << p.gpu << ": collector knee " << knee_rps;
    // One point per ladder step (one window each), the knee's p99 within the SLA.
    EXPECT_EQ(row["curve"].get_array().size(), kFitLadder.size()) << json;
    EXPECT_LE(row["p99_ms"].get_double().value_unsafe(), kFitSlaMs);
    // Perf per watt at the knee: its throughput over the scripted draw.
    EXPECT_NEAR(row["gpu_watts"].get_double().value_unsafe(), p.watts, p.watts * 0.02) << json;
    EXPECT_NEAR(row["requests_per_joule"].get_double().value_unsafe(), knee_rps / p.watts,
                knee_rps / p.watts * 0.03)
        << json;
    EXPECT_EQ(std::string_view(row["verdict"].get_string().value_unsafe()), "fits SLA") << json;
  }
  // The owner and risk map: every risk names one of the arms, an owner, a mitigation and
  // a rollback boundary.
  for (simdjson::dom::element risk : doc["risks"].get_array()) {
    const std::string arm(risk["arm"].get_string().value_unsafe());
    EXPECT_TRUE(rows.contains(arm)) << arm;
    EXPECT_FALSE(std::string_view(risk["owner"].get_string().value_unsafe()).empty());
    EXPECT_FALSE(std::string_view(risk["mitigation"].get_string().value_unsafe()).empty());
    EXPECT_FALSE(std::string_view(risk["rollback_boundary"].get_string().value_unsafe()).empty());
  }
  EXPECT_EQ(json.rfind("{\"marker\":\"opmap-report kind=fit baseline=gpu_name ", 0), 0u) << json;

  // An owner signs the fit report as they sign a release report.
  RunResult signoff = opmap::testing::Run({OpmapBin(), "signoff", dir_.File("fit.json"), "--owner",
                                           "Ana Ruiz", "--role", "modeling", "--collector",
                                           collector_->address()},
                                          dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
  ASSERT_EQ(signoff.exit_code, 0) << signoff.err;
  EXPECT_TRUE(absl::StrContains(signoff.out, "report     fit by gpu_name over Fake H100,Fake L40S, best gpu_name=Fake H100"))
      << signoff.out;

  // The HTML page in headless Chromium: both curves with their knees, and perf per watt.
  if (std::string missing = ChromiumMissing(); missing.rfind("fail: ", 0) == 0) {
    ADD_FAILURE() << missing.substr(6);
  } else if (missing.empty()) {
    ASSERT_EQ(Report("html", "fit.html").exit_code, 0);
    ProcessResult dom = RunChromium(dir_.path(), {"--dump-dom", "file://" + dir_.File("fit.html")});
    ASSERT_EQ(dom.exit_code, 0) << dom.err;
    // 8 window points and a knee marker per arm with a knee.
    EXPECT_GE(PlotMarks(dom.out, "plot-load-curves").value_or(0), 9u);
    EXPECT_GE(PlotMarks(dom.out, "plot-perf-per-watt").value_or(0), 8u);
  }
  EXPECT_EQ(agent.Stop(), 0);
}

}  // namespace
}  // namespace opmap::testing
