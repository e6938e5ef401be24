#include "analysis/timeline/launch_stats.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/timeline/test_trace.h"

namespace opmap::analysis {
namespace {

using testing::TraceBuilder;

TEST(IsHtaLaunchApiTest, RuntimeLaunchesAndAsyncMemoryOnly) {
  EXPECT_TRUE(IsHtaLaunchApi("cudaLaunchKernel", false));
  EXPECT_TRUE(IsHtaLaunchApi("cudaLaunchKernelExC", false));
  EXPECT_TRUE(IsHtaLaunchApi("cudaMemcpyAsync", true));
  EXPECT_TRUE(IsHtaLaunchApi("cudaMemsetAsync", true));
  EXPECT_FALSE(IsHtaLaunchApi("cudaMemcpyAsync", false));
  EXPECT_FALSE(IsHtaLaunchApi("cuLaunchKernel", true));
  EXPECT_FALSE(IsHtaLaunchApi("cudaGraphLaunch", true));
  EXPECT_FALSE(IsHtaLaunchApi("hipLaunchKernel", true));
  EXPECT_FALSE(IsHtaLaunchApi("cudaMemcpy", true));
}

// Five launches HTA counts, four things it does not.
struct LaunchFixture {
  TraceBuilder b;
  std::vector<int32_t> launch;
  void Pair(std::string_view api, int64_t api_start, int64_t api_dur, int64_t gpu_start,
            int64_t gpu_dur, GpuEventKind kind = GpuEventKind::kKernel) {
    const int64_t corr = static_cast<int64_t>(b.trace.api_calls.size()) + 1;
    const int32_t a = b.Api(api, api_start, api_dur, corr);
    b.Gpu(gpu_start, gpu_dur, 7, 0, kind, corr);
    launch.push_back(a);
  }
  LaunchFixture() {
    Pair("cudaLaunchKernel", 0, 1000, 800, 500);        // delay -200: clipped to 0
    Pair("cudaLaunchKernelExC", 2000, 2000, 4100, 1500);  // delay 100
    Pair("cudaMemcpyAsync", 5000, 3000, 8200, 2500, GpuEventKind::kMemcpy);  // 200
    Pair("cudaLaunchKernel", 10000, 4000, 14300, 3500);  // delay 300
    Pair("cudaMemsetAsync", 20000, 10000, 31000, 4500, GpuEventKind::kMemset);  // 1000
    Pair("cuLaunchKernel", 40000, 700, 41000, 100);      // driver API: not counted
    const int64_t corr = 99;
    const int32_t graph = b.Api("cudaGraphLaunch", 50000, 900, corr);  // not counted
    b.Gpu(51000, 100, 7, 0, GpuEventKind::kKernel, corr);
    launch.push_back(graph);
    b.Gpu(51200, 100, 7, 0, GpuEventKind::kKernel, corr);
    launch.push_back(graph);
    b.Api("cudaMemsetAsync", 60000, 500, 123);  // no GPU event: drops out of the join
    b.Gpu(70000, 100);                          // no launch at all
    launch.push_back(-1);
  }
};

TEST(LaunchStatsTest, HandBuiltTraceExactPercentiles) {
  LaunchFixture f;
  LaunchStatsSummary s = ComputeLaunchStats(f.b.trace, f.launch);
  ASSERT_EQ(s.launches.size(), 5u);
  EXPECT_EQ(s.clipped_delay_count, 1);
  EXPECT_EQ(s.launches[0].gpu_event, 0);
  EXPECT_EQ(s.launches[0].api_call, 0);
  EXPECT_EQ(s.launches[0].launch_delay_ns, 0);
  EXPECT_EQ(s.launches[1].cpu_duration_ns, 2000);
  EXPECT_EQ(s.launches[1].gpu_duration_ns, 1500);
  EXPECT_EQ(s.launches[1].launch_delay_ns, 100);
  EXPECT_EQ(s.launches[4].launch_delay_ns, 1000);

  // cpu_duration {1000, 2000, 3000, 4000, 10000}
  EXPECT_EQ(s.cpu_duration_ns.count, 5);
  EXPECT_DOUBLE_EQ(s.cpu_duration_ns.mean, 4000);
  EXPECT_NEAR(s.cpu_duration_ns.stddev, 3535.5339059327378, 1e-9);
  EXPECT_DOUBLE_EQ(s.cpu_duration_ns.min, 1000);
  EXPECT_DOUBLE_EQ(s.cpu_duration_ns.p50, 3000);
  EXPECT_NEAR(s.cpu_duration_ns.p95, 8800, 1e-6);  // 4000 + 0.8 * 6000
  EXPECT_NEAR(s.cpu_duration_ns.p99, 9760, 1e-6);  // 4000 + 0.96 * 6000
  EXPECT_DOUBLE_EQ(s.cpu_duration_ns.max, 10000);

  // gpu_duration {500, 1500, 2500, 3500, 4500}
  EXPECT_EQ(s.gpu_duration_ns.count, 5);
  EXPECT_DOUBLE_EQ(s.gpu_duration_ns.mean, 2500);
  EXPECT_NEAR(s.gpu_duration_ns.stddev, 1581.1388300841897, 1e-9);
  EXPECT_DOUBLE_EQ(s.gpu_duration_ns.p50, 2500);
  EXPECT_NEAR(s.gpu_duration_ns.p95, 4300, 1e-6);
  EXPECT_NEAR(s.gpu_duration_ns.p99, 4460, 1e-6);

  // launch_delay {0, 100, 200, 300, 1000}
  EXPECT_EQ(s.launch_delay_ns.count, 5);
  EXPECT_DOUBLE_EQ(s.launch_delay_ns.mean, 320);
  EXPECT_DOUBLE_EQ(s.launch_delay_ns.min, 0);
  EXPECT_DOUBLE_EQ(s.launch_delay_ns.p50, 200);
  EXPECT_NEAR(s.launch_delay_ns.p95, 860, 1e-6);
  EXPECT_NEAR(s.launch_delay_ns.p99, 972, 1e-6);
  EXPECT_DOUBLE_EQ(s.launch_delay_ns.max, 1000);
}

TEST(LaunchStatsTest, WithoutMemoryEvents) {
  LaunchFixture f;
  LaunchStatsOptions o;
  o.include_memory_events = false;
  LaunchStatsSummary s = ComputeLaunchStats(f.b.trace, f.launch, o);
  ASSERT_EQ(s.launches.size(), 3u);
  EXPECT_EQ(s.cpu_duration_ns.count, 3);
  EXPECT_DOUBLE_EQ(s.cpu_duration_ns.p50, 2000);
  EXPECT_NEAR(s.cpu_duration_ns.mean, 7000.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(s.launch_delay_ns.max, 300);
}

TEST(LaunchStatsTest, EmptyTraceAndBadIndices) {
  Trace empty;
  LaunchStatsSummary e = ComputeLaunchStats(empty, {});
  EXPECT_TRUE(e.launches.empty());
  EXPECT_EQ(e.cpu_duration_ns.count, 0);

  TraceBuilder b;
  b.Api("cudaLaunchKernel", 0, 10, 1);
  b.Gpu(20, 5, 7, 0, GpuEventKind::kKernel, 1);
  b.Gpu(40, 5, 7, 0, GpuEventKind::kKernel, 2);
  b.Gpu(60, 5, 7, 0, GpuEventKind::kKernel, 3);
  // Index 7 is out of range and the third entry is missing: both are skipped.
  LaunchStatsSummary s = ComputeLaunchStats(b.trace, std::vector<int32_t>{0, 7});
  ASSERT_EQ(s.launches.size(), 1u);
  EXPECT_EQ(s.launches[0].launch_delay_ns, 10);
  EXPECT_DOUBLE_EQ(s.gpu_duration_ns.mean, 5);
}

}  // namespace
}  // namespace opmap::analysis
