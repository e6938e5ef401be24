// WriteRecommendationJson (the documented shape in analysis/release/README.md) and
// RecommendationSections (tables and the two plots).
#include <string>

#include "analysis/release/release_recommendation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/unit/release/release_fixture.h"

namespace opmap::analysis {
namespace {

using namespace release_test;
using ::testing::HasSubstr;

ReleaseInputs Regressed() {
  Arm base = MakeArm("base", 1), cand = MakeArm("cand", 1.2);
  base.layers = {{"decoder.mlp", "aten::mm", 8 * kMs, std::nullopt, 6 * kMs}};
  cand.layers = {{"decoder.mlp", "aten::mm", 10.5 * kMs, std::nullopt, 8.2 * kMs}};
  base.memory_stall_share.reset();
  base.unavailable["memory_stall_share"] = "no PMU in this VM";
  return Inputs(base, cand);
}

TEST(ReleaseJson, DocumentedShape) {
  const ReleaseInputs in = Regressed();
  const Recommendation r = Recommend(in);
  text::JsonWriter w;
  WriteRecommendationJson(in, r, w);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(w.str()).get(doc), simdjson::SUCCESS) << w.str();
  EXPECT_EQ(std::string_view(doc["verdict"]), "rollback");
  EXPECT_EQ(simdjson::dom::array(doc["reasons"]).size(), r.reasons.size());
  EXPECT_EQ(simdjson::dom::array(doc["rejected"]).size(), 2u);
  EXPECT_EQ(int64_t(doc["criteria"]["min_samples"]), 50);
  EXPECT_EQ(int64_t(doc["criteria"]["hold_windows"]), 3);
  EXPECT_DOUBLE_EQ(double(doc["criteria"]["p99_regression_threshold"]), 0.05);

  simdjson::dom::array matrix = doc["matrix"];
  ASSERT_EQ(matrix.size(), 9u);
  simdjson::dom::element p99 = matrix.at(2);
  EXPECT_EQ(std::string_view(p99["metric"]), "p99 latency");
  EXPECT_EQ(std::string_view(p99["unit"]), "ms");
  EXPECT_DOUBLE_EQ(double(p99["baseline"]), 19.9);
  EXPECT_DOUBLE_EQ(double(p99["candidate"]), 23.88);
  EXPECT_DOUBLE_EQ(double(p99["change"]), 0.2);
  EXPECT_EQ(std::string_view(p99["status"]), "fail");
  EXPECT_TRUE(bool(p99["required"]));
  EXPECT_DOUBLE_EQ(double(p99["test"]["u"]), 29319.0);
  EXPECT_GT(double(p99["test"]["z"]), 8);
  EXPECT_DOUBLE_EQ(double(p99["test"]["p"]), 0);  // 7.8e-16 at 10 decimals
  EXPECT_DOUBLE_EQ(double(p99["test"]["effect"]), 0.7330);  // 29319 / 40000, 4 decimals
  EXPECT_EQ(int64_t(p99["test"]["n"]["baseline"]), 200);
  EXPECT_EQ(int64_t(p99["test"]["n"]["candidate"]), 200);
  simdjson::dom::element stall = matrix.at(5);
  EXPECT_EQ(std::string_view(stall["status"]), "unavailable");
  EXPECT_TRUE(stall["baseline"].is_null());  // never 0
  EXPECT_TRUE(stall["test"].is_null());

  simdjson::dom::array triggers = doc["triggers"];
  ASSERT_EQ(triggers.size(), 6u);
  EXPECT_EQ(std::string_view(triggers.at(0)["name"]), "p99 regression");
  EXPECT_TRUE(bool(triggers.at(0)["held"]));
  EXPECT_EQ(int64_t(triggers.at(0)["windows_held"]), 4);
  EXPECT_EQ(std::string_view(triggers.at(0)["layer"]), "decoder.mlp");
  EXPECT_EQ(std::string_view(triggers.at(0)["owner"]), "runtime systems engineer");

  simdjson::dom::array deltas = doc["layer_deltas"];
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_DOUBLE_EQ(double(deltas.at(0)["baseline_ns_per_request"]), 8e6);
  EXPECT_DOUBLE_EQ(double(deltas.at(0)["candidate_ns_per_request"]), 10.5e6);
  EXPECT_DOUBLE_EQ(double(deltas.at(0)["delta_ns_per_request"]), 2.5e6);
  EXPECT_TRUE(deltas.at(0)["delta_p99_ns"].is_null());

  simdjson::dom::array windows = doc["candidate"]["windows"];
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_EQ(std::string_view(windows.at(1)["id"]), "agent-1/session-1");
  EXPECT_EQ(int64_t(windows.at(1)["requests"]), 50);
  EXPECT_DOUBLE_EQ(double(windows.at(1)["p50_ms"]), 18);
  EXPECT_DOUBLE_EQ(double(windows.at(1)["p95_ms"]), 23.4);
  EXPECT_DOUBLE_EQ(double(windows.at(1)["p99_ms"]), 23.88);
  EXPECT_EQ(int64_t(doc["baseline"]["latency_samples"]), 200);
  EXPECT_EQ(std::string_view(doc["inputs"]["baseline.seed"]), "7");
  EXPECT_EQ(std::string_view(doc["inputs"]["candidate.revision"]), "cand");
  EXPECT_EQ(std::string_view(doc["unavailable"]["baseline.memory_stall_share"]),
            "no PMU in this VM");
}

const DocPlot* FindPlot(const std::vector<DocSection>& sections, std::string_view id) {
  for (const DocSection& s : sections) {
    for (const DocPlot& p : s.plots) {
      if (p.id == id) return &p;
    }
  }
  return nullptr;
}

TEST(ReleaseSections, TablesAndLatencyOverTime) {
  absl::StatusOr<WorkloadProfile> p = ParseWorkloadProfileText(
      "model = m\nparameters = 1B\nlayers = 2\nheads = 2\nhead_dim = 4\nhidden = 8\n"
      "precision = bf16\nsla_p99_ms = 25\n");
  ASSERT_TRUE(p.ok());
  ReleaseInputs in = Regressed();
  in.profile = &*p;
  const Recommendation r = Recommend(in);
  const std::vector<DocSection> s = RecommendationSections(in, r);
  ASSERT_GE(s.size(), 5u);
  EXPECT_EQ(s[0].heading, "Release recommendation");
  EXPECT_EQ(s[0].facts[0], (std::pair<std::string, std::string>{"verdict", "rollback"}));
  EXPECT_EQ(s[1].heading, "Validation matrix");
  ASSERT_EQ(s[1].tables.size(), 1u);
  ASSERT_EQ(s[1].tables[0].rows.size(), 9u);
  const auto& p99 = s[1].tables[0].rows[2];
  EXPECT_EQ(p99[0], "p99 latency");
  EXPECT_EQ(p99[1], "19.90");
  EXPECT_EQ(p99[2], "23.88");
  EXPECT_EQ(p99[4], "+20.0%");
  EXPECT_EQ(p99[7], "fail (required)");
  EXPECT_EQ(s[1].tables[0].rows[5][1], "—");  // memory-stall share unavailable
  EXPECT_EQ(s[2].heading, "Rollback triggers");
  EXPECT_EQ(s[2].tables[0].rows[0][2], "held");
  EXPECT_EQ(s[3].heading, "Layer deltas");
  EXPECT_EQ(s[3].tables[0].rows[0][3], "+2.500");

  const DocPlot* plot = FindPlot(s, "plot-latency-over-time");
  ASSERT_NE(plot, nullptr);
  EXPECT_EQ(plot->kind, PlotKind::kLine);
  EXPECT_EQ(plot->unavailable, "");
  ASSERT_EQ(plot->series.size(), 6u);
  EXPECT_EQ(plot->series[0].name, "baseline p50");
  EXPECT_EQ(plot->series[5].name, "candidate p99");
  ASSERT_EQ(plot->series[5].points.size(), 4u);
  EXPECT_DOUBLE_EQ(plot->series[5].points[0].x, 0);
  EXPECT_DOUBLE_EQ(plot->series[5].points[3].x, 180);  // window starts 60 s apart
  EXPECT_DOUBLE_EQ(plot->series[5].points[3].y, 23.88);
  EXPECT_DOUBLE_EQ(plot->series[0].points[1].y, 15);
  ASSERT_EQ(plot->lines.size(), 1u);
  EXPECT_FALSE(plot->lines[0].slope.has_value());
  EXPECT_DOUBLE_EQ(plot->lines[0].cap, 25);
  EXPECT_EQ(plot->lines[0].name, "SLA p99 25 ms");
}

TEST(ReleaseSections, LatencyThroughputNeedsDifferentLoads) {
  ReleaseInputs in = Regressed();
  const std::vector<DocSection> one_load = RecommendationSections(in, Recommend(in));
  const DocPlot* same = FindPlot(one_load, "plot-latency-throughput");
  ASSERT_NE(same, nullptr);
  // Every window ran 50 requests in 60 s.
  EXPECT_EQ(same->unavailable, "all windows ran at the same load within 5% (0.83–0.83 req/s)");

  // Load steps of 50, 60, 70, 80 requests per 60 s.
  for (int i = 0; i < 4; ++i) in.candidate.windows[i].requests = 50 + 10 * i;
  const std::vector<DocSection> s = RecommendationSections(in, Recommend(in));
  const DocPlot* plot = FindPlot(s, "plot-latency-throughput");
  ASSERT_NE(plot, nullptr);
  EXPECT_EQ(plot->kind, PlotKind::kScatter);
  EXPECT_EQ(plot->unavailable, "");
  ASSERT_EQ(plot->series.size(), 2u);
  EXPECT_EQ(plot->series[1].name, "candidate");
  ASSERT_EQ(plot->series[1].points.size(), 4u);
  EXPECT_DOUBLE_EQ(plot->series[1].points[3].x, 80 / 60.0);
  EXPECT_DOUBLE_EQ(plot->series[1].points[3].y, 23.88);
}

}  // namespace
}  // namespace opmap::analysis
