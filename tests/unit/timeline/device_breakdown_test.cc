#include "analysis/timeline/device_breakdown.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/timeline/test_trace.h"

namespace opmap::analysis {
namespace {

using testing::TraceBuilder;

TEST(DeviceBreakdownTest, EmptyTrace) {
  Trace t;
  EXPECT_TRUE(ComputeDeviceBreakdown(t, {}).empty());
}

TEST(DeviceBreakdownTest, OverlappingKernelsOnTwoStreams) {
  TraceBuilder b;
  b.Gpu(0, 100, /*stream=*/1);
  b.Gpu(400, 100, /*stream=*/1);
  b.Gpu(50, 100, /*stream=*/2);  // overlaps [0,100) on the other stream
  const bool compute[] = {true, true, true};
  std::vector<DeviceBreakdown> d = ComputeDeviceBreakdown(b.trace, compute);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].device, 0);
  EXPECT_EQ(d[0].event_count, 3);
  EXPECT_EQ(d[0].compute_event_count, 3);
  EXPECT_EQ(d[0].first_start_ns, 0);
  EXPECT_EQ(d[0].last_end_ns, 500);
  EXPECT_EQ(d[0].span_ns, 500);
  EXPECT_EQ(d[0].busy_ns, 250);  // [0,150) + [400,500), not the summed 300
  EXPECT_EQ(d[0].idle_ns, 250);
  EXPECT_EQ(d[0].compute_ns, 250);
  EXPECT_EQ(d[0].non_compute_ns, 0);
}

TEST(DeviceBreakdownTest, NestedIntervalsAndMemcpyNotCompute) {
  TraceBuilder b;
  b.Gpu(0, 1000, 1);                                     // compute kernel
  b.Gpu(100, 100, 2);                                    // nested compute kernel
  b.Gpu(900, 300, 3, 0, GpuEventKind::kMemcpy);          // memcpy, partly hidden
  b.Gpu(1500, 100, 3, 0, GpuEventKind::kMemset);         // memset flagged compute by mistake
  b.Gpu(1700, 50, 4);                                    // communication kernel (not compute)
  const bool compute[] = {true, true, true, true, false};
  std::vector<DeviceBreakdown> d = ComputeDeviceBreakdown(b.trace, compute);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].event_count, 5);
  EXPECT_EQ(d[0].compute_event_count, 2);  // memcpy/memset never count as compute
  EXPECT_EQ(d[0].span_ns, 1750);
  EXPECT_EQ(d[0].busy_ns, 1200 + 100 + 50);
  EXPECT_EQ(d[0].idle_ns, 1750 - 1350);
  EXPECT_EQ(d[0].compute_ns, 1000);
  EXPECT_EQ(d[0].non_compute_ns, 350);  // memcpy tail 200 + memset 100 + comm 50
}

TEST(DeviceBreakdownTest, ZeroLengthEventsExtendSpanOnly) {
  TraceBuilder b;
  b.Gpu(100, 50);
  b.Gpu(1000, 0);  // zero-length kernel
  b.Gpu(120, 0);   // zero-length inside a busy interval
  const bool compute[] = {true, true, true};
  std::vector<DeviceBreakdown> d = ComputeDeviceBreakdown(b.trace, compute);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].event_count, 3);
  EXPECT_EQ(d[0].span_ns, 900);
  EXPECT_EQ(d[0].busy_ns, 50);
  EXPECT_EQ(d[0].idle_ns, 850);
  EXPECT_EQ(d[0].compute_ns, 50);
  EXPECT_EQ(d[0].non_compute_ns, 0);
}

TEST(DeviceBreakdownTest, TwoDevicesSortedAndSeparate) {
  TraceBuilder b;
  b.Gpu(5000, 100, 7, /*device=*/3);
  b.Gpu(0, 100, 7, /*device=*/0);
  b.Gpu(5050, 100, 8, /*device=*/3, GpuEventKind::kMemcpy);
  b.Gpu(300, 100, 7, /*device=*/0);
  const bool compute[] = {true, true, false, true};
  std::vector<DeviceBreakdown> d = ComputeDeviceBreakdown(b.trace, compute);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].device, 0);
  EXPECT_EQ(d[0].event_count, 2);
  EXPECT_EQ(d[0].span_ns, 400);
  EXPECT_EQ(d[0].busy_ns, 200);
  EXPECT_EQ(d[0].idle_ns, 200);
  EXPECT_EQ(d[0].compute_ns, 200);
  EXPECT_EQ(d[1].device, 3);
  EXPECT_EQ(d[1].event_count, 2);
  EXPECT_EQ(d[1].first_start_ns, 5000);
  EXPECT_EQ(d[1].span_ns, 150);
  EXPECT_EQ(d[1].busy_ns, 150);
  EXPECT_EQ(d[1].idle_ns, 0);
  EXPECT_EQ(d[1].compute_ns, 100);
  EXPECT_EQ(d[1].non_compute_ns, 50);
}

TEST(DeviceBreakdownTest, ShortFlagSpanCountsAsNotCompute) {
  TraceBuilder b;
  b.Gpu(0, 100);
  b.Gpu(200, 100);
  const bool compute[] = {true};
  std::vector<DeviceBreakdown> d = ComputeDeviceBreakdown(b.trace, compute);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].busy_ns, 200);
  EXPECT_EQ(d[0].compute_ns, 100);
  EXPECT_EQ(d[0].non_compute_ns, 100);
}

}  // namespace
}  // namespace opmap::analysis
