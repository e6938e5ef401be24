// The NVTX push/pop hooks (agent/inject/nvtx_hooks.cc, compiled into this test rather than
// loaded as the library) in the mode the CUDA graph recorder needs: with kKeepStacks each
// thread's stack of open ranges is kept while no window is open, without a record or a
// drop, and GraphStack reads it — while a window still emits only what it saw pushed.
// Each test runs on a thread of its own: the hooks' state is thread-local.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "abi/control_messages.h"
#include "agent/inject/capture_state.h"
#include "agent/inject/graph_stack.h"
#include "agent/inject/nvtx_hooks.h"
#include "tests/unit/cupti/ring_test_reader.h"

namespace opmap::inject::nvtx_stack_test {
namespace {

using ::opmap::testing::HeapRing;

// The process-wide state the hooks read, for one test.
class NvtxStackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_state.window_state.store(0);
    g_state.writer = *ring_.writer();
  }
  void TearDown() override {
    g_state.window_state.store(0);
    g_state.writer = ring::RingWriter();
  }
  template <typename Fn>
  void OnFreshThread(Fn fn) {
    std::thread t(fn);
    t.join();
  }
  HeapRing ring_;
};

std::vector<std::string> Names(uint32_t max = 64) {
  GraphStackLevel levels[64];
  const uint32_t n = nvtx::GraphStack(levels, max);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; ++i) out.emplace_back(levels[i].name, levels[i].name_len);
  return out;
}

TEST_F(NvtxStackTest, KeptStacksFollowPushesAndPopsWithoutAWindow) {
  OnFreshThread([] {
    nvtx::RangePushA("before keeping");  // dormant: not seen
    KeepStacks();
    nvtx::RangePushA("decoder_layer.0");
    nvtx::RangePushA("demo::qkv_linear{flops=8,bytes=4}");
    EXPECT_EQ(Names(), (std::vector<std::string>{"decoder_layer.0",
                                                 "demo::qkv_linear{flops=8,bytes=4}"}));
    EXPECT_EQ(Names(1), std::vector<std::string>{"decoder_layer.0"});
    // The recorder's slot for each push: kept with the push, fresh for a new one.
    GraphStackLevel levels[64];
    ASSERT_EQ(nvtx::GraphStack(levels, 64), 2u);
    *levels[0].table_index = 7;
    nvtx::RangePop();
    nvtx::RangePushA("demo::mlp");
    ASSERT_EQ(nvtx::GraphStack(levels, 64), 2u);
    EXPECT_EQ(*levels[0].table_index, 7u);
    EXPECT_EQ(*levels[1].table_index, 0u);
    nvtx::RangePop();
    nvtx::RangePop();
    nvtx::RangePop();  // the push from before keeping: nothing left, nothing counted
    EXPECT_TRUE(Names().empty());
  });
  EXPECT_TRUE(ring_.ReadAll().empty());
  for (uint32_t c = 0; c < ring::kDropCauseCount; ++c) {
    EXPECT_EQ(ring_.drops(ring::DropCause(c)), 0u) << c;
  }
}

TEST_F(NvtxStackTest, AWindowEmitsOnlyItsOwnRangesFromAKeptStack) {
  OnFreshThread([] {
    KeepStacks();
    nvtx::RangePushA("server");  // pushed before the window, popped inside it
    StoreWindowState((uint64_t{1} << 32) | ring::kCaptureNvtx);
    EXPECT_TRUE(KeepingStacks(LoadWindowState()));  // the window kept the flag
    nvtx::RangePushA("step");
    nvtx::RangePushA("op");
    EXPECT_EQ(Names(), (std::vector<std::string>{"server", "step", "op"}));
    nvtx::RangePop();
    nvtx::RangePop();
    nvtx::RangePop();
    StoreWindowState(uint64_t{1} << 32);  // the window ends; stacks stay kept
    nvtx::RangePushA("after");
    EXPECT_EQ(Names(), std::vector<std::string>{"after"});
  });
  const std::vector<HeapRing::Record> recs = ring_.ReadAll();
  ASSERT_EQ(recs.size(), 2u);
  const auto op = recs[0].As<ring::RangeRecord>();
  EXPECT_EQ(recs[0].Inline<ring::RangeRecord>(op.name_len), "op");
  EXPECT_EQ(op.depth, 1u);  // "server" is not the window's: depths count from "step"
  const auto step = recs[1].As<ring::RangeRecord>();
  EXPECT_EQ(recs[1].Inline<ring::RangeRecord>(step.name_len), "step");
  EXPECT_EQ(step.depth, 0u);
  EXPECT_GT(step.end_ns, step.start_ns);
  EXPECT_EQ(ring_.drops(ring::kUnmatchedPop), 1u);  // "server", as without kept stacks
}

// The recorder could not start: the bit goes off, and the pushes kept outside any window
// must not be emitted as if the window had seen them begin.
TEST_F(NvtxStackTest, StacksNoLongerKeptStartAfresh) {
  OnFreshThread([] {
    KeepStacks();
    nvtx::RangePushA("kept");
    StoreWindowState((uint64_t{1} << 32) | ring::kCaptureNvtx);
    g_state.window_state.fetch_and(~uint64_t{kKeepStacks});
    nvtx::RangePushA("op");
    nvtx::RangePop();
    nvtx::RangePop();
  });
  const std::vector<HeapRing::Record> recs = ring_.ReadAll();
  ASSERT_EQ(recs.size(), 1u);
  const auto op = recs[0].As<ring::RangeRecord>();
  EXPECT_EQ(recs[0].Inline<ring::RangeRecord>(op.name_len), "op");
  EXPECT_EQ(op.depth, 0u);
  EXPECT_EQ(ring_.drops(ring::kUnmatchedPop), 1u);
}

TEST_F(NvtxStackTest, WithoutKeptStacksTheRecorderSeesNothing) {
  OnFreshThread([] {
    StoreWindowState((uint64_t{1} << 32) | ring::kCaptureNvtx);
    nvtx::RangePushA("op");
    EXPECT_TRUE(Names().empty());  // a window's stack may be stale for the recorder
    nvtx::RangePop();
  });
  EXPECT_EQ(ring_.ReadAll().size(), 1u);
}

}  // namespace
}  // namespace opmap::inject::nvtx_stack_test
