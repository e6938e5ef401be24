// ActivityBuffers without a GPU: the bounded allocation CUPTI's buffer requests get, the
// completed-buffer queue and its drop accounting, and the decode worker — fed with
// hand-built CUDA 13.0 kernel records that the real libcupti walks.
#include "agent/inject/cupti/cupti_buffers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/cupti/ring_test_reader.h"

namespace opmap::inject {
namespace {

using ::opmap::testing::HeapRing;
using namespace std::chrono_literals;

// Writes `n` kernel records (correlation ids first_corr, first_corr+1, ...) at the start
// of `buffer`; returns the valid size.
size_t FillKernels(uint8_t* buffer, size_t size, int n, uint32_t first_corr) {
  static const char kName[] = "fill_kernel";
  size_t off = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_LE(off + sizeof(CUpti_ActivityKernel10), size);
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = first_corr + static_cast<uint32_t>(i);
    k.start = 1000 + i;
    k.end = 2000 + i;
    k.name = kName;
    std::memcpy(buffer + off, &k, sizeof(k));
    off += sizeof(k);
  }
  return off;
}

class ActivityBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!LoadCuptiApi(&api_, &reason)) GTEST_SKIP() << "libcupti unavailable: " << reason;
  }
  CuptiApi api_;
};

TEST_F(ActivityBuffersTest, RequestsAreBoundedAndAligned) {
  ActivityBuffers buffers(&api_);
  buffers.Configure(1000, 3, 2);  // below the 64 KiB floor
  std::vector<uint8_t*> got;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = nullptr;
    size_t size = 0;
    buffers.Request(&b, &size);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(size, 64u * 1024);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    got.push_back(b);
  }
  uint8_t* over = reinterpret_cast<uint8_t*>(1);
  size_t over_size = 99;
  buffers.Request(&over, &over_size);  // the bound: CUPTI gets nothing and drops
  EXPECT_EQ(over, nullptr);
  EXPECT_EQ(over_size, 0u);
  EXPECT_EQ(buffers.outstanding(), 3u);
  buffers.Complete(got.back(), 0);  // an empty completed buffer is just freed
  got.pop_back();
  EXPECT_EQ(buffers.outstanding(), 2u);
  buffers.Request(&over, &over_size);
  EXPECT_NE(over, nullptr);
  got.push_back(over);
  for (uint8_t* b : got) buffers.Complete(b, 0);
  EXPECT_EQ(buffers.outstanding(), 0u);
  buffers.Complete(nullptr, 0);  // CUPTI may complete "no buffer": harmless
  EXPECT_EQ(buffers.outstanding(), 0u);
}

TEST_F(ActivityBuffersTest, FullQueueCountsTheDroppedBuffersRecords) {
  HeapRing ring;
  ActivityBuffers buffers(&api_);
  buffers.Configure(64 * 1024, 8, 2);
  buffers.SetRing(ring.writer());
  // No worker yet: the queue fills.
  const int counts[] = {2, 3, 5};
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = nullptr;
    size_t size = 0;
    buffers.Request(&b, &size);
    ASSERT_NE(b, nullptr);
    buffers.Complete(b, FillKernels(b, size, counts[i], 100 * (i + 1)));
  }
  EXPECT_EQ(buffers.queued(), 2u);
  EXPECT_EQ(buffers.outstanding(), 2u);
  EXPECT_EQ(ring.drops(ring::kCuptiBufferQueue), 5u);  // the third buffer's records

  std::string reason;
  ASSERT_TRUE(buffers.StartWorker(&reason)) << reason;
  EXPECT_TRUE(buffers.WaitIdle(1000ms));
  EXPECT_EQ(buffers.outstanding(), 0u);
  EXPECT_EQ(buffers.decoded().kernels, 5u);
  const auto recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 5u);
  const uint64_t want[] = {100, 101, 200, 201, 202};  // queue order, record order
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(recs[i].As<ring::KernelRecord>().correlation_id, want[i]);
  }
  buffers.StopWorker();
}

TEST_F(ActivityBuffersTest, StopDrainsAndLaterBuffersAreCounted) {
  HeapRing ring;
  ActivityBuffers buffers(&api_);
  buffers.Configure(64 * 1024, 4, 4);
  buffers.SetRing(ring.writer());
  std::string reason;
  ASSERT_TRUE(buffers.StartWorker(&reason)) << reason;
  uint8_t* b = nullptr;
  size_t size = 0;
  buffers.Request(&b, &size);
  buffers.Complete(b, FillKernels(b, size, 7, 1));
  buffers.StopWorker();  // decodes what was queued before joining
  EXPECT_EQ(ring.ReadAll().size(), 7u);
  buffers.StopWorker();  // idempotent

  buffers.Request(&b, &size);  // a buffer CUPTI completes after the worker is gone
  ASSERT_NE(b, nullptr);
  buffers.Complete(b, FillKernels(b, size, 4, 50));
  EXPECT_EQ(ring.drops(ring::kCuptiBufferQueue), 4u);
  EXPECT_EQ(buffers.outstanding(), 0u);
  EXPECT_EQ(ring.ReadAll().size(), 7u);
}

// Several CUPTI threads requesting and completing at once: every record ends up either in
// the ring or in a drop counter, and every buffer is freed.
TEST_F(ActivityBuffersTest, ConcurrentProducersLoseNothingSilently) {
  HeapRing ring(1 << 20);
  ActivityBuffers buffers(&api_);
  buffers.Configure(64 * 1024, 6, 3);
  buffers.SetRing(ring.writer());
  std::string reason;
  ASSERT_TRUE(buffers.StartWorker(&reason)) << reason;
  constexpr int kThreads = 4, kBuffers = 40, kRecords = 10;
  std::atomic<uint64_t> declined{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBuffers; ++i) {
        uint8_t* b = nullptr;
        size_t size = 0;
        buffers.Request(&b, &size);
        if (b == nullptr) {  // at the bound: CUPTI would drop these records and count them
          declined += kRecords;
          continue;
        }
        buffers.Complete(b, FillKernels(b, size, kRecords, (t * kBuffers + i) * kRecords));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(buffers.WaitIdle(2000ms));
  buffers.StopWorker();
  EXPECT_EQ(buffers.outstanding(), 0u);
  const uint64_t in_ring = ring.ReadAll().size();
  EXPECT_EQ(in_ring, buffers.decoded().kernels - buffers.decoded().ring_full);
  EXPECT_EQ(in_ring + ring.drops(ring::kCuptiBufferQueue) + ring.drops(ring::kRingFull) +
                declined.load(),
            uint64_t{kThreads} * kBuffers * kRecords);
}

}  // namespace
}  // namespace opmap::inject
