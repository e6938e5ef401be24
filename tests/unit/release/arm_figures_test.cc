// analysis/release/arm_figures.h on hand-built Query responses: the figures FetchArm hands
// over, checked number by number.
#include "analysis/release/arm_figures.h"

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

opmap::v1::LatencyRow* Row(opmap::v1::LatencyResponse& resp, std::vector<std::string> keys,
                           int64_t sum_ns) {
  opmap::v1::LatencyRow* row = resp.add_rows();
  for (const std::string& k : keys) row->add_key(k);
  row->set_sum_ns(sum_ns);
  return row;
}

TEST(ArmFigures, WindowsSortedWithQuantilesAndThroughput) {
  opmap::v1::LatencyResponse by_session;
  opmap::v1::LatencyRow* late = Row(by_session, {"a/s2"}, 0);
  late->set_window_start_ns(3'000'000'000);
  late->set_window_end_ns(5'000'000'000);  // 2 s
  late->set_count(30);
  for (double q : {1e6, 2e6, 3e6}) late->add_quantile_ns(q);
  opmap::v1::LatencyRow* early = Row(by_session, {"a/s1"}, 0);
  early->set_window_start_ns(1'000'000'000);
  early->set_window_end_ns(2'000'000'000);  // 1 s
  early->set_count(10);
  early->add_quantile_ns(4e6);  // only p50 answered
  Arm arm;
  arm.revision = "r1";
  SetWindows(by_session, arm);
  ASSERT_EQ(arm.windows.size(), 2u);
  EXPECT_EQ(arm.windows[0].id, "a/s1");
  EXPECT_EQ(arm.windows[0].p50_ns, 4e6);
  EXPECT_FALSE(arm.windows[0].p99_ns.has_value());
  EXPECT_EQ(arm.windows[1].p99_ns, 3e6);

  SetThroughputAndMfu(nullptr, nullptr, arm);
  ASSERT_TRUE(arm.throughput_rps.has_value());
  EXPECT_DOUBLE_EQ(*arm.throughput_rps, 40.0 / 3.0);  // 40 requests over 3 window-seconds
  EXPECT_FALSE(arm.mfu.has_value());
  EXPECT_EQ(arm.unavailable["mfu"], "no workload profile (--profile FILE): model FLOPs unknown");
}

TEST(ArmFigures, NoRowsSayWhy) {
  opmap::v1::LatencyResponse empty;
  Arm arm;
  SetWindows(empty, arm);
  EXPECT_EQ(arm.unavailable["latency"], "no complete session of this revision holds requests");
  opmap::v1::Unavailable* u = empty.add_unavailable();
  u->set_what("counter A");
  u->set_reason("no PMU");
  empty.add_unavailable()->CopyFrom(*u);
  empty.mutable_unavailable(1)->set_what("counter B");
  Arm arm2;
  SetWindows(empty, arm2);
  EXPECT_EQ(arm2.unavailable["latency"], "counter A, counter B: no PMU");
}

TEST(ArmFigures, LayersLeaveModuleRangesOutAndDividePerRequest) {
  opmap::v1::LatencyResponse rows;
  Row(rows, {"decoder_layer.0", "demo::gelu"}, 600);
  Row(rows, {"decoder_layer.0", "demo::matmul"}, 400);
  Row(rows, {"forward", "decoder_layer.0"}, 5000);  // a module range itself: left out
  Row(rows, {"", "demo::embed"}, 100);
  Arm arm;
  arm.requests = 10;
  ASSERT_TRUE(SetLayers(rows, /*by_module=*/true, /*gpu_time=*/false, arm));
  ASSERT_EQ(arm.layers.size(), 2u);  // "(outside modules)", "decoder_layer.0"
  EXPECT_EQ(arm.layers[0].layer, "(outside modules)");
  EXPECT_DOUBLE_EQ(arm.layers[0].ns_per_request, 10);
  EXPECT_EQ(arm.layers[1].layer, "decoder_layer.0");
  EXPECT_DOUBLE_EQ(arm.layers[1].ns_per_request, 100);
  EXPECT_EQ(arm.layers[1].top_operator, "demo::gelu");
  EXPECT_DOUBLE_EQ(arm.layers[1].top_operator_ns_per_request, 60);
  EXPECT_EQ(arm.inputs["layers.basis"], "operator host time (inclusive) by module, per request");

  opmap::v1::LatencyResponse no_layer;
  Row(no_layer, {"", "demo::gelu"}, 5);
  Arm none;
  EXPECT_FALSE(SetLayers(no_layer, true, true, none));
  EXPECT_TRUE(none.layers.empty());
}

TEST(ArmFigures, StallShareFromScaledCountersOrWhyNot) {
  opmap::v1::CountersResponse resp;
  opmap::v1::CounterRow* mem = resp.add_rows();
  mem->set_name("PAPI_MEM_SCY");
  mem->set_scaled(250);
  opmap::v1::CounterRow* cyc = resp.add_rows();
  cyc->set_name("PAPI_TOT_CYC");
  cyc->set_scaled(1000);
  Arm arm;
  SetStallShare(resp, arm);
  EXPECT_EQ(arm.memory_stall_share, 0.25);

  Arm missing;
  SetStallShare(opmap::v1::CountersResponse(), missing);
  EXPECT_FALSE(missing.memory_stall_share.has_value());
  EXPECT_EQ(missing.unavailable["memory_stall_share"],
            "no PAPI_MEM_SCY and PAPI_TOT_CYC counters were collected; GPU warp-stall "
            "samples are not kept by the collector");
}

}  // namespace
}  // namespace opmap::analysis
