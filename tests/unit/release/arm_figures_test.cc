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

// Perf per watt: a window's GPUs' average W added up, requests per joule per window and
// for the arm (energy-weighted), the power mode as inputs, and why not without power.
TEST(ArmFigures, PerfPerWattFromPerSessionGpuPower) {
  Arm arm;
  for (int i = 0; i < 2; ++i) {
    ArmWindow w;
    w.id = "a/s" + std::to_string(i + 1);
    w.start_ns = i * 10'000'000'000LL;
    w.end_ns = w.start_ns + (i == 0 ? 2'000'000'000 : 4'000'000'000);
    w.requests = 100;
    arm.windows.push_back(w);
  }
  opmap::v1::PowerResponse power;
  auto gpu = [&](const char* session, const char* device, double watts) {
    opmap::v1::PowerRow* r = power.add_rows();
    r->add_key(session);
    r->set_domain(opmap::v1::POWER_DOMAIN_GPU);
    r->set_device(device);
    r->set_name("NVIDIA H200");
    r->set_average_w(watts);
    r->set_power_limit_min_mw(700'000);
    r->set_power_limit_max_mw(700'000);
    r->set_mode("persistence=on mig=off compute=default");
  };
  gpu("a/s1", "GPU-a", 300);
  gpu("a/s1", "GPU-b", 200);  // a two-GPU process: 500 W
  gpu("a/s2", "GPU-a", 250);
  opmap::v1::PowerRow* dram = power.add_rows();  // CPU/DRAM rows are not GPU power
  dram->add_key("a/s2");
  dram->set_domain(opmap::v1::POWER_DOMAIN_DRAM);
  dram->set_average_w(30);
  SetThroughputAndMfu(nullptr, nullptr, arm);
  SetPower(power, nullptr, arm);
  EXPECT_DOUBLE_EQ(*arm.windows[0].gpu_watts, 500);
  EXPECT_DOUBLE_EQ(*arm.windows[0].requests_per_joule, 100.0 / 1000);  // 500 W × 2 s
  EXPECT_DOUBLE_EQ(*arm.windows[1].requests_per_joule, 100.0 / 1000);  // 250 W × 4 s
  EXPECT_DOUBLE_EQ(*arm.requests_per_joule, 200.0 / 2000);
  EXPECT_DOUBLE_EQ(*arm.gpu_watts, 2000.0 / 6);
  EXPECT_EQ(arm.inputs["power.gpu"], "NVIDIA H200");
  EXPECT_EQ(arm.inputs["power.limit_w"], "700");
  EXPECT_EQ(arm.inputs["power.mode"], "persistence=on mig=off compute=default");
  EXPECT_FALSE(arm.tokens_per_joule.has_value());
  EXPECT_EQ(arm.unavailable["tokens_per_joule"], "no decode_tokens in the workload profile");

  Arm none = arm;
  none.requests_per_joule.reset();
  opmap::v1::PowerResponse empty;
  opmap::v1::Unavailable* u = empty.add_unavailable();
  u->set_what("power gpu");
  u->set_reason("NVML: libnvidia-ml.so.1: cannot open shared object file");
  SetPower(empty, nullptr, none);
  EXPECT_FALSE(none.requests_per_joule.has_value());
  EXPECT_EQ(none.unavailable["perf_per_watt"],
            "no window of the arm has GPU power (power gpu: NVML: libnvidia-ml.so.1: cannot "
            "open shared object file)");
}

}  // namespace
}  // namespace opmap::analysis
