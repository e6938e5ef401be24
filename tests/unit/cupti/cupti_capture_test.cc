// CuptiCapture on a machine without a GPU or driver (this CI machine): Start must fail
// with a reason naming the driver, change nothing in the ring, and leave a process that
// finalizes and exits normally. On a machine with a working driver these tests skip: the
// GPU path is checked by the GPU validation run, not here.
#include "agent/inject/cupti/cupti_capture.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "agent/inject/cupti/cupti_api.h"
#include "tests/unit/cupti/ring_test_reader.h"

namespace opmap::inject {
namespace {

using ::opmap::testing::HeapRing;
using ::testing::HasSubstr;

// True when this machine has a driver that initializes (then the failure tests skip).
bool DriverWorks() {
  DriverApi d;
  std::string reason;
  return LoadDriverApi(&d, &reason);
}

class CuptiCaptureNoGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DriverWorks()) {
      GTEST_SKIP() << "a CUDA driver works here; these tests are for hosts without one";
    }
    CuptiApi api;
    std::string reason;
    if (!LoadCuptiApi(&api, &reason)) GTEST_SKIP() << "libcupti unavailable: " << reason;
  }
};

TEST_F(CuptiCaptureNoGpuTest, StartFailsNamingTheDriver) {
  HeapRing ring;
  CuptiCapture capture;
  std::string reason;
  std::string stalls_reason = "stale";
  CuptiOptions options;
  options.stalls = true;
  options.stalls_reason = &stalls_reason;
  EXPECT_FALSE(capture.Start(ring.writer(), options, &reason));
  EXPECT_THAT(reason, HasSubstr("no CUDA driver"));
  EXPECT_THAT(reason, HasSubstr("driver"));
  std::cout << "unavailable reason: " << reason << "\n";
  RecordProperty("unavailable_reason", reason);
  EXPECT_EQ(stalls_reason, "");  // Start never got as far as PC sampling

  // Nothing was written or counted.
  EXPECT_TRUE(ring.ReadAll().empty());
  for (uint32_t c = 0; c < ring::kDropCauseCount; ++c) {
    EXPECT_EQ(ring.drops(ring::DropCause(c)), 0u);
  }

  // Stop without a window, Finalize twice: harmless.
  capture.Stop();
  capture.Finalize();
  capture.Finalize();
}

TEST_F(CuptiCaptureNoGpuTest, RepeatedStartsGiveTheSameReason) {
  HeapRing ring;
  CuptiCapture capture;
  std::string first, second;
  EXPECT_FALSE(capture.Start(ring.writer(), CuptiOptions{}, &first));
  EXPECT_FALSE(capture.Start(ring.writer(), CuptiOptions{}, &second));
  EXPECT_EQ(first, second);
  capture.Finalize();
  std::string after;
  EXPECT_FALSE(capture.Start(ring.writer(), CuptiOptions{}, &after));
  EXPECT_THAT(after, HasSubstr("finalized"));
}

TEST_F(CuptiCaptureNoGpuTest, NoRingIsAReasonNotACrash) {
  CuptiCapture capture;
  std::string reason;
  EXPECT_FALSE(capture.Start(nullptr, CuptiOptions{}, &reason));
  EXPECT_FALSE(reason.empty());
}

// The process must exit normally after libcupti was loaded: CUDA 13 segfaults at exit
// when a used libcupti is unloaded without cuptiFinalize. Checked in a fresh child
// process (threadsafe death-test style re-executes this binary).
TEST_F(CuptiCaptureNoGpuTest, ProcessExitsNormallyAfterFailedStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        HeapRing ring;
        CuptiCapture capture;
        std::string reason;
        const bool started = capture.Start(ring.writer(), CuptiOptions{}, &reason);
        capture.Finalize();
        std::cerr << "started=" << started << " reason=" << reason << "\n";
        std::exit(started ? 3 : 0);
      },
      ::testing::ExitedWithCode(0), "no CUDA driver");
  // And without Finalize (a capture leaked at exit, destructor never run).
  EXPECT_EXIT(
      {
        HeapRing ring;
        auto* capture = new CuptiCapture;
        std::string reason;
        capture->Start(ring.writer(), CuptiOptions{}, &reason);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace opmap::inject
