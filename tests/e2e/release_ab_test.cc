// opmap report on real demo-workload runs: the baseline and the candidate revision run at
// the same time, at the same offered load with the same arrivals (seed), under one agent
// that captures 2 s windows of each; the collector holds both and `opmap report` compares
// them. A candidate whose decoder layer 1 runs its MLP down projection 240 times must be a
// rollback that names the p99 trigger and decoder_layer.1; two identical revisions must
// ship. Then an owner signs the report and the next report lists the sign-off.
#include <simdjson.h>

#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/chromium.h"

namespace opmap::testing {
namespace {

// The demo's profile (examples/demo_infer/demo.profile) with an SLA and a target this
// shared 2-core machine meets with room: the verdicts below come from the comparison,
// not from the absolute figures.
constexpr char kProfile[] = R"(model = opmap-demo
parameters = 396544
layers = 2
heads = 4
head_dim = 32
hidden = 128
precision = fp32
prefill_tokens = 32
sla_p99_ms = 500
throughput_target = 10
)";

class ReleaseAb : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CollectorProcess>> collector =
        StartCollectorWithAgentToken(dir_);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_ = *std::move(collector);
    WriteFileOrDie(dir_.File("demo.profile"), kProfile);
    // 2 s windows every 2.5 s for both processes at once; a CPU budget the agent stays
    // under here, so windows keep their length.
    agent_ = std::make_unique<AgentProcess>(
        dir_.path(), std::vector<std::string>{
                         "--collector", collector_->address(), "--insecure", "--token-file",
                         dir_.File("agent.token"), "--capture-window", "2s", "--capture-every",
                         "2500ms", "--capture-jitter", "0", "--cpu-budget", "0.9",
                         "--max-concurrent-captures", "2"});
    ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  }

  // Both revisions at once, 20 s each at `rate` requests/s with the same arrivals: ~7
  // windows per arm, at a load where queueing does not drown the service time.
  void RunBoth(const std::string& base, const std::string& cand,
               const std::vector<std::string>& cand_flags, int rate = 50) {
    Child a, b;
    for (auto [child, rev, extra] : {std::tuple{&a, base, std::vector<std::string>{}},
                                     std::tuple{&b, cand, cand_flags}}) {
      std::vector<std::string> env = InjectEnv(agent_->socket());
      env.push_back("OPMAP_INIT_WAIT_MS=5000");
      env.push_back("OPMAP_MODEL=demo-ab");
      env.push_back("OPMAP_MODEL_REVISION=" + rev);
      std::vector<std::string> argv = {DemoBin(), "--duration", "20", "--rate",
                                       absl::StrCat(rate), "--seed", "42", "--json"};
      argv.insert(argv.end(), extra.begin(), extra.end());
      ASSERT_TRUE(child->Start(argv, dir_.File(rev + ".out"), dir_.File(rev + ".err"), env).ok());
    }
    EXPECT_EQ(a.Wait(absl::Seconds(90)), 0) << ReadFileOrEmpty(dir_.File(base + ".err"));
    EXPECT_EQ(b.Wait(absl::Seconds(90)), 0) << ReadFileOrEmpty(dir_.File(cand + ".err"));
  }

  // Waits until each revision has ≥ 3 windows stored and the window count has been
  // stable for 3 s (the agent streams a window after it closes).
  void WaitForWindows(const std::string& base, const std::string& cand) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    std::map<std::string, int> last;
    absl::Time stable_since = absl::Now();
    while (absl::Now() < deadline) {
      RunResult r = opmap::testing::Run(
          {OpmapBin(), "query", "latency", "--collector", collector_->address(), "--subject",
           "request", "--group-by", "revision,session", "--format", "json"},
          dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken}, absl::Seconds(30));
      LatencyResult result;
      std::map<std::string, int> windows;
      if (r.exit_code == 0 &&
          ParseLatencyJson(r.out, {"revision", "session"}, {"p50", "p95", "p99"}, &result)) {
        for (const LatencyRow& row : result.rows) ++windows[row.key[0]];
      }
      if (windows != last) {
        last = windows;
        stable_since = absl::Now();
      } else if (windows[base] >= 3 && windows[cand] >= 3 &&
                 absl::Now() - stable_since > absl::Seconds(3)) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    FAIL() << "windows stored: " << last[base] << " of " << base << ", " << last[cand] << " of "
           << cand;
  }

  RunResult Report(const std::string& base, const std::string& cand, const std::string& format,
                   const std::string& out) {
    return opmap::testing::Run({OpmapBin(), "report", "--collector", collector_->address(),
                                "--baseline", base, "--candidate", cand, "--profile",
                                dir_.File("demo.profile"), "--format", format, "--output",
                                dir_.File(out)},
                               dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken},
                               absl::Seconds(60));
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
  std::unique_ptr<AgentProcess> agent_;
  simdjson::dom::parser parser_;
};

TEST_F(ReleaseAb, SlowLayerCandidateIsRolledBackNamingP99AndTheLayer) {
  // 240 repeats add about 45 ms to every request, so the candidate's fastest request is
  // slower than the baseline arm's p99 on a busy machine and every candidate window fires
  // the p99 trigger whatever the noise. (CI once saw a baseline p99 of 23.6 ms at 50
  // requests/s with +9 ms per candidate request, which left a candidate window under the
  // bar.) 15 requests/s keeps the candidate at ~0.7 of a core, as before: ~30 requests a
  // window, ~300 an arm.
  RunBoth("base", "slow", {"--slow-layer", "1", "--slow-repeat", "240"}, 15);
  WaitForWindows("base", "slow");
  RunResult r = Report("base", "slow", "json", "report.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = ReadFileOrEmpty(dir_.File("report.json"));
  simdjson::dom::element doc;
  ASSERT_EQ(parser_.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element rec = doc["recommendation"];
  EXPECT_EQ(std::string_view(rec["verdict"].get_string().value_unsafe()), "rollback") << json;
  bool p99_held = false;
  // A named array: value_unsafe() of a temporary result must not be ranged over.
  simdjson::dom::array t_list = rec["triggers"].get_array().value_unsafe();
  for (simdjson::dom::element t : t_list) {
    if (std::string_view(t["name"].get_string().value_unsafe()) != "p99 regression") continue;
    p99_held = t["held"].get_bool().value_unsafe();
    EXPECT_EQ(std::string_view(t["layer"].get_string().value_unsafe()), "decoder_layer.1") << json;
    EXPECT_GE(t["windows_held"].get_int64().value_unsafe(), 3);
  }
  EXPECT_TRUE(p99_held) << json;
  simdjson::dom::element top = rec["layer_deltas"].at(0);
  // The figures behind the verdict, for the log (docs/handoff.md quotes a run).
  std::cout << "p99 baseline " << rec["baseline"]["p99_ms"].get_double().value_unsafe()
            << " ms, candidate " << rec["candidate"]["p99_ms"].get_double().value_unsafe()
            << " ms; windows " << rec["baseline"]["windows"].get_array().value_unsafe().size()
            << "/" << rec["candidate"]["windows"].get_array().value_unsafe().size()
            << "; decoder_layer.1 +"
            << top["delta_ns_per_request"].get_double().value_unsafe() / 1e6
            << " ms per request\n";
  EXPECT_EQ(std::string_view(top["layer"].get_string().value_unsafe()), "decoder_layer.1");
  EXPECT_EQ(std::string_view(top["top_operator"].get_string().value_unsafe()),
            "demo::mlp_down_linear");
  // 239 extra down projections: the layer's time per request grows by far more than any
  // other layer's.
  EXPECT_GT(top["delta_ns_per_request"].get_double().value_unsafe(),
            4 * rec["layer_deltas"].at(1)["delta_ns_per_request"].get_double().value_unsafe());
  // Reproducibility inputs include what ran, from the sessions' Resource.
  // The candidate's p99 tail grew in the slowed layer's operators (docs/metrics.md "Tail
  // latency"), from both arms' request-breakdown rollups: ~45 ms injected. Its requests
  // also queue behind each other, so queueing may have grown more: the layer must be one
  // of the two largest growths.
  simdjson::dom::element tail = rec["tail"]["keys"].at(0);
  EXPECT_EQ(std::string_view(tail["request"].get_string().value_unsafe()), "request") << json;
  bool layer_grew = false;
  simdjson::dom::array grown = tail["components"].get_array().value_unsafe();
  for (size_t i = 0; i < 2 && i < grown.size(); ++i) {
    simdjson::dom::element c = grown.at(i).value_unsafe();
    if (std::string_view(c["kind"].get_string().value_unsafe()) == "host_operator" &&
        std::string_view(c["module"].get_string().value_unsafe()) == "decoder_layer.1") {
      layer_grew = c["growth_ms"].get_double().value_unsafe() > 20;
    }
  }
  EXPECT_TRUE(layer_grew) << json;
  EXPECT_EQ(std::string_view(rec["inputs"]["baseline.model"].get_string().value_unsafe()), "demo-ab");
  EXPECT_EQ(std::string_view(rec["inputs"]["candidate.revision"].get_string().value_unsafe()), "slow");
  EXPECT_EQ(json.rfind("{\"marker\":\"opmap-report kind=release baseline=base candidate=slow "
                       "verdict=rollback\"", 0), 0u);

  // The HTML page in headless Chromium: per-window percentiles of both arms, the
  // per-window throughput/p99 points and the per-layer change are drawn.
  if (std::string missing = ChromiumMissing(); missing.rfind("fail: ", 0) == 0) {
    ADD_FAILURE() << missing.substr(6);
  } else if (missing.empty()) {
    ASSERT_EQ(Report("base", "slow", "html", "report.html").exit_code, 0);
    ProcessResult dom = RunChromium(dir_.path(), {"--dump-dom", "file://" + dir_.File("report.html")});
    ASSERT_EQ(dom.exit_code, 0) << dom.err;
    EXPECT_GT(PlotMarks(dom.out, "plot-latency-over-time").value_or(0), 6u);
    EXPECT_GT(PlotMarks(dom.out, "plot-layer-time").value_or(0), 1u);
    EXPECT_TRUE(PlotMarks(dom.out, "plot-latency-throughput").has_value());
  }

  // An owner signs the report; the next report shows who signed which file.
  RunResult s = opmap::testing::Run({OpmapBin(), "signoff", dir_.File("report.json"), "--owner",
                                     "Dana Lee", "--role", "runtime", "--collector",
                                     collector_->address()},
                                    dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("signed: "), std::string::npos) << s.out;
  RunResult again = opmap::testing::Run({OpmapBin(), "signoff", dir_.File("report.json"),
                                         "--owner", "Dana Lee", "--role", "runtime",
                                         "--collector", collector_->address()},
                                        dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
  EXPECT_NE(again.out.find("already signed: "), std::string::npos) << again.out;
  ASSERT_EQ(Report("base", "slow", "md", "report.md").exit_code, 0);
  const std::string md = ReadFileOrEmpty(dir_.File("report.md"));
  EXPECT_NE(md.find("| Dana Lee "), std::string::npos) << md;
  EXPECT_NE(md.find("runtime systems engineer"), std::string::npos);
  EXPECT_NE(md.find("rollback"), std::string::npos);
  EXPECT_EQ(md.rfind("<!-- opmap-report kind=release baseline=base candidate=slow", 0), 0u);
  // A file without a marker is refused, exit 2, naming the file.
  WriteFileOrDie(dir_.File("notes.txt"), "hello");
  RunResult bad = opmap::testing::Run({OpmapBin(), "signoff", dir_.File("notes.txt"), "--owner",
                                       "x", "--role", "runtime", "--collector",
                                       collector_->address()},
                                      dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("notes.txt: no 'opmap-report' marker"), std::string::npos) << bad.err;
}

// Two runs of one revision differ by chance, and more on a shared machine: the arms run at
// once on two cores, and two identical processes' median latencies differ by 2-6 %, either
// way, at Mann-Whitney p < 0.05 (5 of 7 trials printed; n = 800 per arm); then a candidate
// window whose p99 is over 5 % above the baseline arm's fires the p99 trigger, and the
// verdict is hold. Measured 2026-12-08 on the 2-core test machine: hold in 6 of 17 trials,
// never a held trigger. So another pair of identical arms is run when one is held, up to
// five (all held: ~0.5 % at that rate, against ~4 % with three): all five held is a
// failure, and no trial's trigger may hold — a false rollback is what this test exists to
// catch.
TEST_F(ReleaseAb, IdenticalRevisionsShip) {
  std::string verdicts;
  for (const auto& [base, cand] :
       {std::pair{"same-a", "same-b"}, std::pair{"same-c", "same-d"}, std::pair{"same-e", "same-f"},
        std::pair{"same-g", "same-h"}, std::pair{"same-i", "same-j"}}) {
    RunBoth(base, cand, {});
    WaitForWindows(base, cand);
    const std::string file = std::string(base) + ".json";
    RunResult r = Report(base, cand, "json", file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string json = ReadFileOrEmpty(dir_.File(file));
    simdjson::dom::element doc;
    ASSERT_EQ(parser_.parse(json).get(doc), simdjson::SUCCESS) << json;
    // A named array: value_unsafe() of a temporary result must not be ranged over.
    simdjson::dom::array t_list = doc["recommendation"]["triggers"].get_array().value_unsafe();
    for (simdjson::dom::element t : t_list) {
      EXPECT_FALSE(t["held"].get_bool().value_unsafe()) << t;
    }
    const std::string verdict(doc["recommendation"]["verdict"].get_string().value_unsafe());
    std::cout << "[trial] " << base << "/" << cand << ": " << verdict << std::endl;
    if (verdict == "ship") return;
    verdicts += std::string(base) + "/" + cand + ": " + verdict + "\n" + json + "\n";
  }
  ADD_FAILURE() << "identical revisions were not shipped in five trials:\n" << verdicts;
}

}  // namespace
}  // namespace opmap::testing
