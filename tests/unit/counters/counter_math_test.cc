// Scaled() and CpuMemoryStallFraction() on hand-built readings: the multiplex math and
// which definition the stall fraction used.
#include <cmath>
#include <vector>

#include "agent/counters/counter_reading.h"
#include "agent/counters/memory_stall.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::agent {
namespace {

using ::testing::HasSubstr;

CounterReading Papi(const char* name, int64_t value, int64_t enabled, int64_t running) {
  return {name, CounterSource::kPapi, value, enabled, running};
}

TEST(ScaledTest, RanAllTheTimeIsTheRawValue) {
  absl::StatusOr<double> v = Scaled(Papi("PAPI_TOT_CYC", 123456789, 1000, 1000));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 123456789.0);
}

TEST(ScaledTest, MultiplexedIsExtrapolatedToEnabledTime) {
  // Counted 1000 in the third of the time it ran.
  absl::StatusOr<double> v = Scaled(Papi("PAPI_TOT_CYC", 1000, 300, 100));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_DOUBLE_EQ(*v, 3000.0);
}

TEST(ScaledTest, LargeValuesDoNotOverflow) {
  // value * enabled = 4e24 overflows int64; the estimate must still be 8e12.
  absl::StatusOr<double> v =
      Scaled(Papi("PAPI_TOT_CYC", 4'000'000'000'000, 1'000'000'000'000, 500'000'000'000));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_DOUBLE_EQ(*v, 8e12);
}

TEST(ScaledTest, NeverRanIsUnavailableNotZero) {
  absl::StatusOr<double> v = Scaled(Papi("PAPI_MEM_SCY", 0, 5000, 0));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(v.status().message(), HasSubstr("PAPI_MEM_SCY"));
  EXPECT_THAT(v.status().message(), HasSubstr("5000 ns enabled"));
  EXPECT_FALSE(Scaled(Papi("PAPI_MEM_SCY", 7, 0, 0)).ok());
}

TEST(MemoryStallTest, PrefersMemoryStallCyclesAndScalesEach) {
  // Cycles ran half the time (500 -> 1000), memory stalls a quarter (100 -> 400).
  std::vector<CounterReading> readings = {Papi("PAPI_TOT_CYC", 500, 1000, 500),
                                          Papi("PAPI_RES_STL", 900, 1000, 1000),
                                          Papi("PAPI_MEM_SCY", 100, 1000, 250)};
  absl::StatusOr<MemoryStallFraction> f = CpuMemoryStallFraction(readings);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_DOUBLE_EQ(f->fraction, 0.4);
  EXPECT_EQ(f->numerator, "PAPI_MEM_SCY");
  EXPECT_FALSE(f->upper_bound);
}

TEST(MemoryStallTest, FallsBackToResourceStallsAsUpperBound) {
  std::vector<CounterReading> readings = {Papi("PAPI_TOT_CYC", 1000, 10, 10),
                                          Papi("PAPI_RES_STL", 250, 10, 10)};
  absl::StatusOr<MemoryStallFraction> f = CpuMemoryStallFraction(readings);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_DOUBLE_EQ(f->fraction, 0.25);
  EXPECT_EQ(f->numerator, "PAPI_RES_STL");
  EXPECT_TRUE(f->upper_bound);
}

TEST(MemoryStallTest, MissingCountersAreUnavailableWithTheirReason) {
  std::vector<CounterReading> readings = {
      {"perf::TASK-CLOCK", CounterSource::kPerfEvent, 1000, 10, 10},
      // Same name from the wrong source must not be taken for the PAPI preset.
      {"PAPI_TOT_CYC", CounterSource::kPerfEvent, 1000, 10, 10}};
  std::vector<CounterUnavailable> unavailable = {{"PAPI_TOT_CYC", "no PMU here"}};
  absl::StatusOr<MemoryStallFraction> f = CpuMemoryStallFraction(readings, unavailable);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(f.status().message(), HasSubstr("PAPI_TOT_CYC: no PMU here"));

  readings.push_back(Papi("PAPI_TOT_CYC", 1000, 10, 10));
  f = CpuMemoryStallFraction(readings, {{"PAPI_MEM_SCY", "a"}, {"PAPI_RES_STL", "b"}});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("PAPI_MEM_SCY: a; PAPI_RES_STL: b"));
}

TEST(MemoryStallTest, NeverRanOrNoCyclesIsUnavailable) {
  EXPECT_FALSE(CpuMemoryStallFraction({Papi("PAPI_TOT_CYC", 1000, 10, 0),
                                       Papi("PAPI_MEM_SCY", 10, 10, 10)})
                   .ok());
  EXPECT_FALSE(CpuMemoryStallFraction({Papi("PAPI_TOT_CYC", 0, 10, 10),
                                       Papi("PAPI_MEM_SCY", 0, 10, 10)})
                   .ok());
}

}  // namespace
}  // namespace opmap::agent
