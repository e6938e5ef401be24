#include "analysis/timeline/idle_time.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/timeline/test_trace.h"

namespace opmap::analysis {
namespace {

using testing::TraceBuilder;
constexpr int kHost = static_cast<int>(IdleCategory::kHostWait);
constexpr int kKernel = static_cast<int>(IdleCategory::kKernelWait);
constexpr int kOther = static_cast<int>(IdleCategory::kOther);

TEST(IdleTimeTest, CategoryNames) {
  EXPECT_EQ(IdleCategoryName(IdleCategory::kHostWait), "host_wait");
  EXPECT_EQ(IdleCategoryName(IdleCategory::kKernelWait), "kernel_wait");
  EXPECT_EQ(IdleCategoryName(IdleCategory::kOther), "other");
}

TEST(IdleTimeTest, EmptyTrace) {
  Trace t;
  EXPECT_TRUE(ComputeIdleTime(t, {}).empty());
}

// One stream where every gap's category is known; events are added out of order.
TEST(IdleTimeTest, EachGapCategoryOnOneStream) {
  TraceBuilder b;
  std::vector<int32_t> launch;
  auto add = [&](int64_t start, int64_t dur, int64_t launch_start,
                 GpuEventKind kind = GpuEventKind::kKernel) {
    const int64_t corr = static_cast<int64_t>(b.trace.gpu_events.size()) + 100;
    b.Gpu(start, dur, 7, 0, kind, corr);
    launch.push_back(launch_start < 0 ? -1 : b.Api("cudaLaunchKernel", launch_start, 10, corr));
  };
  add(1500, 500, 1200);     // E1: launch 1200 > prev end 1000: host_wait, gap 500
  add(0, 1000, 0);          // E0: first on the stream: no interval
  add(3000, 1000, 1900);    // E2: launch before prev end 2000, gap 1000 < 30us: kernel_wait
  add(50000, 1000, 3500);   // E3: gap 46000 >= 30000: other
  add(81000, 1000, 10000);  // E4: gap exactly 30000 (not < threshold): other
  add(111999, 1000, 20000); // E5: gap 29999: kernel_wait
  add(200000, 1000, -1);    // E6: no launch: gap 87001: other
  add(260000, 1000, 250000, GpuEventKind::kMemcpy);  // E7: launch 250000 > 201000: host_wait 59000
  add(260500, 1500, 100);   // E8: overlaps E7 on the same stream: gap -500, kernel_wait (as HTA)

  std::vector<StreamIdleTime> r = ComputeIdleTime(b.trace, launch);
  ASSERT_EQ(r.size(), 1u);
  const StreamIdleTime& s = r[0];
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.stream, 7);
  EXPECT_EQ(s.event_count, 9);
  EXPECT_EQ(s.unknown_launch_count, 1);
  EXPECT_EQ(s.ns(IdleCategory::kHostWait), 500 + 59000);
  EXPECT_EQ(s.count(IdleCategory::kHostWait), 2);
  EXPECT_EQ(s.ns(IdleCategory::kKernelWait), 1000 + 29999 - 500);
  EXPECT_EQ(s.count(IdleCategory::kKernelWait), 3);
  EXPECT_EQ(s.ns(IdleCategory::kOther), 46000 + 30000 + 87001);
  EXPECT_EQ(s.count(IdleCategory::kOther), 3);
  EXPECT_EQ(s.idle_ns, 59500 + 30499 + 163001);
  EXPECT_DOUBLE_EQ(s.ratio[kHost], 59500.0 / 253000.0);
  EXPECT_DOUBLE_EQ(s.ratio[kKernel], 30499.0 / 253000.0);
  EXPECT_DOUBLE_EQ(s.ratio[kOther], 163001.0 / 253000.0);

  // idle_interval_stats for kernel_wait: gaps {-500, 1000, 29999}.
  const DescriptiveStats& k = s.interval_stats[kKernel];
  EXPECT_EQ(k.count, 3);
  EXPECT_DOUBLE_EQ(k.min, -500);
  EXPECT_DOUBLE_EQ(k.p25, 250);
  EXPECT_DOUBLE_EQ(k.p50, 1000);
  EXPECT_DOUBLE_EQ(k.p75, 15499.5);
  EXPECT_DOUBLE_EQ(k.max, 29999);
  EXPECT_NEAR(k.mean, 30499.0 / 3, 1e-9);
  EXPECT_EQ(s.interval_stats[kHost].count, 2);
  EXPECT_DOUBLE_EQ(s.interval_stats[kHost].p50, 29750);
  EXPECT_EQ(s.interval_stats[kOther].count, 3);
  EXPECT_DOUBLE_EQ(s.interval_stats[kOther].p50, 46000);
}

TEST(IdleTimeTest, ThresholdOption) {
  TraceBuilder b;
  b.Gpu(0, 100);
  b.Gpu(1100, 100);  // gap 1000, no launch
  b.Gpu(1250, 100);  // gap 50, no launch
  IdleTimeOptions o;
  o.consecutive_kernel_delay_ns = 1000;
  std::vector<StreamIdleTime> r = ComputeIdleTime(b.trace, std::vector<int32_t>{-1, -1, -1}, o);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].ns(IdleCategory::kKernelWait), 50);
  EXPECT_EQ(r[0].ns(IdleCategory::kOther), 1000);
  EXPECT_EQ(r[0].ns(IdleCategory::kHostWait), 0);
  EXPECT_EQ(r[0].unknown_launch_count, 3);
}

TEST(IdleTimeTest, StreamsAndDevicesSeparateAndSorted) {
  TraceBuilder b;
  b.Gpu(0, 100, /*stream=*/20, /*device=*/1);
  b.Gpu(0, 100, /*stream=*/7, /*device=*/0);
  b.Gpu(150, 100, /*stream=*/7, /*device=*/0);   // gap 50 on (0,7)
  b.Gpu(120, 100, /*stream=*/13, /*device=*/0);  // alone on (0,13): no interval
  b.Gpu(400, 100, /*stream=*/20, /*device=*/1);  // gap 300 on (1,20)
  std::vector<StreamIdleTime> r = ComputeIdleTime(b.trace, std::vector<int32_t>(5, -1));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].device, 0);
  EXPECT_EQ(r[0].stream, 7);
  EXPECT_EQ(r[0].ns(IdleCategory::kKernelWait), 50);
  EXPECT_EQ(r[1].device, 0);
  EXPECT_EQ(r[1].stream, 13);
  EXPECT_EQ(r[1].idle_ns, 0);
  EXPECT_EQ(r[1].count(IdleCategory::kOther), 0);
  EXPECT_DOUBLE_EQ(r[1].ratio[kOther], 0);
  EXPECT_EQ(r[2].device, 1);
  EXPECT_EQ(r[2].stream, 20);
  EXPECT_EQ(r[2].ns(IdleCategory::kKernelWait), 300);
}

// HTA gives a GPU event that has a correlation id but no launch in the trace the
// timestamp of the trace's first event as launch time; opmap does so only when asked.
TEST(IdleTimeTest, UnlaunchedLaunchStartOption) {
  TraceBuilder b;
  b.Gpu(0, 1000, 7, 0, GpuEventKind::kKernel, /*correlation=*/5);
  b.Gpu(1500, 100, 7, 0, GpuEventKind::kKernel, /*correlation=*/6);  // no launch
  b.Gpu(1700, 100, 7, 0, GpuEventKind::kKernel, kNone);               // no correlation at all
  const std::vector<int32_t> launch = {-1, -1, -1};

  std::vector<StreamIdleTime> plain = ComputeIdleTime(b.trace, launch);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].ns(IdleCategory::kHostWait), 0);
  EXPECT_EQ(plain[0].ns(IdleCategory::kKernelWait), 500 + 100);

  IdleTimeOptions o;
  o.unlaunched_launch_start_ns = 1200;  // after the first event's end (1000), before 1600
  std::vector<StreamIdleTime> hta = ComputeIdleTime(b.trace, launch, o);
  ASSERT_EQ(hta.size(), 1u);
  EXPECT_EQ(hta[0].ns(IdleCategory::kHostWait), 500);     // correlation 6: 1200 > 1000
  EXPECT_EQ(hta[0].ns(IdleCategory::kKernelWait), 100);   // no correlation: never host_wait
}

TEST(IdleTimeTest, InvalidOrMissingLaunchIndexIsUnknown) {
  TraceBuilder b;
  b.Api("cudaLaunchKernel", 5000, 10, 1);
  b.Gpu(0, 100, 7, 0, GpuEventKind::kKernel, 1);
  b.Gpu(200, 100, 7, 0, GpuEventKind::kKernel, 2);
  b.Gpu(400, 100, 7, 0, GpuEventKind::kKernel, 3);
  // 99 is out of range, the third entry is missing: neither may be read.
  std::vector<StreamIdleTime> r = ComputeIdleTime(b.trace, std::vector<int32_t>{0, 99});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].unknown_launch_count, 2);
  EXPECT_EQ(r[0].ns(IdleCategory::kKernelWait), 200);
  EXPECT_EQ(r[0].ns(IdleCategory::kHostWait), 0);
}

}  // namespace
}  // namespace opmap::analysis
