// agent/power/power_window.h (pure: reads → a window's PowerSample rows, the GPUs a
// CUDA_VISIBLE_DEVICES names) and agent/daemon/power_monitor.h on the test NVML library:
// its thread's reads become the rows of a window, for the GPUs a process may use.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/daemon/power_monitor.h"
#include "agent/power/power_window.h"
#include "common/base/wall_clock.h"

namespace opmap::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kOneSecond = 1'000'000'000;

GpuState Read(int64_t t, uint64_t mj, uint32_t limit_mw, uint64_t throttle, uint32_t temp) {
  GpuState s;
  s.index = 1;
  s.name = "NVIDIA H200";
  s.uuid = "GPU-bbbb";
  s.time_ns = t;
  s.energy_mj.value = mj;
  s.power_mw.unavailable = "not read";
  s.power_limit_mw.value = limit_mw;
  s.sm_clock_mhz.value = 1755;
  s.mem_clock_mhz.unavailable = "nvmlDeviceGetClockInfo: Not Supported (NVML 3)";
  s.throttle_reasons.value = throttle;
  s.temperature_c.value = temp;
  s.persistence.value = true;
  s.mig.value = false;
  s.compute_mode.value = 0;
  return s;
}

TEST(WindowReads, FromTheLastReadAtOrBeforeTheStartToTheLastBeforeTheEnd) {
  const std::vector<int64_t> t = {10, 20, 30, 40, 50};
  ReadSpan s = WindowReads(t, 25, 45);
  EXPECT_EQ(s.first, 1u);  // 20: brackets the start
  EXPECT_EQ(s.last, 4u);   // through 40
  s = WindowReads(t, 5, 15);  // before every read: the first read on
  EXPECT_EQ(s.first, 0u);
  EXPECT_EQ(s.last, 1u);
  s = WindowReads(t, 60, 70);  // after every read: the last one alone
  EXPECT_EQ(s.first, 4u);
  EXPECT_EQ(s.last, 5u);
  s = WindowReads({}, 1, 2);
  EXPECT_EQ(s.first, s.last);
}

TEST(GpuPowerRow, EnergyCounterModeAndTheSpansWorstMoments) {
  const std::vector<GpuState> reads = {Read(1 * kOneSecond, 10'000, 700'000, 0, 40),
                                       Read(2 * kOneSecond, 360'000, 700'000, 0x4, 61),
                                       Read(3 * kOneSecond, 710'000, 500'000, 0x40, 55)};
  const opmap::v1::PowerSample row = GpuPowerRow(reads);
  EXPECT_EQ(row.domain(), opmap::v1::POWER_DOMAIN_GPU);
  EXPECT_EQ(row.device(), "GPU-bbbb");
  EXPECT_EQ(row.index(), 1u);
  EXPECT_EQ(row.start_ns(), 1 * kOneSecond);
  EXPECT_EQ(row.end_ns(), 3 * kOneSecond);
  EXPECT_EQ(row.energy_mj(), 700'000u);  // 700 J over 2 s
  EXPECT_EQ(row.covered_ns(), 2 * kOneSecond);
  EXPECT_EQ(row.method(), opmap::v1::ENERGY_METHOD_COUNTER);
  EXPECT_EQ(row.reads(), 3u);
  EXPECT_EQ(row.power_limit_mw(), 500'000u);   // the last read's
  EXPECT_EQ(row.throttle_reasons(), 0x44u);    // OR over the span
  EXPECT_EQ(row.temperature_c(), 61u);         // the hottest read
  EXPECT_TRUE(row.persistence());
  EXPECT_FALSE(row.has_memory_clock_mhz());    // absent, never 0
  ASSERT_EQ(row.unavailable_size(), 1);
  EXPECT_EQ(row.unavailable(0).what(), "memory_clock_mhz");
  EXPECT_EQ(row.unavailable(0).reason(), "nvmlDeviceGetClockInfo: Not Supported (NVML 3)");
}

TEST(GpuPowerRow, OneReadHasNoEnergyAndSaysWhy) {
  const opmap::v1::PowerSample row = GpuPowerRow(std::vector<GpuState>{Read(kOneSecond, 5, 1, 0, 1)});
  EXPECT_FALSE(row.has_energy_mj());
  ASSERT_GE(row.unavailable_size(), 1);
  EXPECT_EQ(row.unavailable(0).what(), "energy_mj");
  EXPECT_EQ(row.unavailable(0).reason(), "energy needs two reads, the window has 1");
}

TEST(ZonePowerRow, CounterDifferencesAcrossAWrap) {
  RaplZone zone{"intel-rapl:0", "package-0", 1'000'000};
  const std::vector<ZoneRead> reads = {{0, 900'000}, {kOneSecond, 50'000}, {2 * kOneSecond, 150'000}};
  const opmap::v1::PowerSample row = ZonePowerRow(zone, reads);
  EXPECT_EQ(row.domain(), opmap::v1::POWER_DOMAIN_CPU);
  EXPECT_EQ(row.device(), "intel-rapl:0");
  EXPECT_EQ(row.energy_mj(), 250u);  // 150 000 + 100 000 µJ
  EXPECT_EQ(row.covered_ns(), 2 * kOneSecond);
  RaplZone dram{"intel-rapl:0:1", "dram", 1'000'000};
  EXPECT_EQ(ZonePowerRow(dram, std::vector<ZoneRead>{{0, 1}}).domain(),
            opmap::v1::POWER_DOMAIN_DRAM);
  EXPECT_FALSE(ZonePowerRow(dram, std::vector<ZoneRead>{{0, 1}}).has_energy_mj());
}

TEST(VisibleGpus, OrdinalsUuidPrefixesAndCudasStopAtTheFirstUnknown) {
  const std::vector<std::string> uuids = {"GPU-aaaa-1", "GPU-bbbb-2", "GPU-bbbc-3"};
  EXPECT_THAT(VisibleGpus(true, "", uuids), ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(VisibleGpus(false, "2,0", uuids), ElementsAre(2u, 0u));
  EXPECT_THAT(VisibleGpus(false, "GPU-bbbb", uuids), ElementsAre(1u));
  EXPECT_THAT(VisibleGpus(false, "GPU-bbb", uuids), ElementsAre());  // names two: neither
  EXPECT_THAT(VisibleGpus(false, "1,7,0", uuids), ElementsAre(1u));  // stops at 7
  EXPECT_THAT(VisibleGpus(false, "", uuids), ElementsAre());
  EXPECT_THAT(VisibleGpus(false, "MIG-1234", uuids), ElementsAre());
}

class PowerMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opmap-power-monitor-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const std::string path = (dir_ / "nvml.script").string();
    std::ofstream(path)
        << "gpu name=Fake_A uuid=GPU-aaaa energy_mj=0 energy_rate_mw=300000 limit_mw=700000\n"
           "gpu name=Fake_B uuid=GPU-bbbb energy_mj=0 energy_rate_mw=150000 limit_mw=350000\n";
    setenv("OPMAP_FAKE_NVML_SCRIPT", path.c_str(), 1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  PowerMonitorOptions Options() {
    return {OPMAP_FAKE_NVML, (dir_ / "no-powercap").string(), absl::Milliseconds(20)};
  }
  std::filesystem::path dir_;
};

TEST_F(PowerMonitorTest, AWindowGetsTheProcesssGpuAtItsDraw) {
  PowerMonitor monitor(Options());
  const int64_t start = base::RealtimeNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const int64_t end = base::RealtimeNs();
  WindowPower w = monitor.Window(start, end, GpuSelection{false, "GPU-bbbb"});
  ASSERT_EQ(w.rows.size(), 1u);
  const opmap::v1::PowerSample& row = w.rows[0];
  EXPECT_EQ(row.device(), "GPU-bbbb");
  EXPECT_EQ(row.name(), "Fake B");
  ASSERT_TRUE(row.has_energy_mj());
  EXPECT_GE(row.covered_ns(), 300'000'000);  // reads every 20 ms bracket the window
  // The fake's counter advances at 150 W of CLOCK_MONOTONIC; reads take CLOCK_REALTIME
  // stamps a few µs apart from it, and whole mJ round: 1 % covers both.
  const double watts = row.energy_mj() * 1e6 / row.covered_ns();
  EXPECT_NEAR(watts, 150.0, 1.5);
  EXPECT_EQ(row.power_limit_mw(), 350'000u);
  // RAPL is missing here (no powercap tree): said once, with the reason.
  ASSERT_EQ(w.unavailable.size(), 1u);
  EXPECT_EQ(w.unavailable[0].first, "power cpu");
  EXPECT_THAT(w.unavailable[0].second, HasSubstr("RAPL: "));

  const std::vector<opmap::v1::Gpu> gpus = monitor.Gpus(GpuSelection{false, "1"});
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].device(), 0u);  // as the process numbers it
  EXPECT_EQ(gpus[0].uuid(), "GPU-bbbb");
  EXPECT_EQ(gpus[0].power_limit_mw(), 350'000u);
  EXPECT_EQ(monitor.Window(start, end, GpuSelection{}).rows.size(), 2u);  // unset: all
  WindowPower none = monitor.Window(start, end, GpuSelection{false, "none"});
  EXPECT_TRUE(none.rows.empty());
  WindowPower wrong = monitor.Window(start, end, GpuSelection{false, "GPU-zzzz"});
  EXPECT_TRUE(wrong.rows.empty());
  ASSERT_GE(wrong.unavailable.size(), 1u);
  EXPECT_EQ(wrong.unavailable[0].second,
            "CUDA_VISIBLE_DEVICES=GPU-zzzz names none of the 2 GPUs NVML sees by ordinal or UUID");
}

TEST_F(PowerMonitorTest, WithoutNvmlOrWithReadsOffEverythingIsUnavailable) {
  PowerMonitorOptions o = Options();
  o.nvml_library = (dir_ / "libnvidia-ml.so.1").string();
  PowerMonitor missing(o);
  WindowPower w = missing.Window(0, base::RealtimeNs(), GpuSelection{});
  EXPECT_TRUE(w.rows.empty());
  ASSERT_EQ(w.unavailable.size(), 2u);
  EXPECT_EQ(w.unavailable[0].first, "power gpu");
  EXPECT_THAT(w.unavailable[0].second, HasSubstr("NVML: "));
  EXPECT_THAT(w.unavailable[0].second, HasSubstr("libnvidia-ml.so.1"));
  o.interval = absl::ZeroDuration();
  PowerMonitor off(o);
  w = off.Window(0, base::RealtimeNs(), GpuSelection{});
  ASSERT_EQ(w.unavailable.size(), 2u);
  EXPECT_EQ(w.unavailable[0].second, "power reads are off (--power-interval 0)");
}

TEST_F(PowerMonitorTest, ReadsAreBoundedPerDeviceAndTheDropsCounted) {
  PowerMonitorOptions o = Options();
  o.interval = absl::Milliseconds(1);
  o.max_reads_per_device = 8;
  PowerMonitor monitor(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(monitor.dropped_reads(), 0);
  // The window's oldest reads are gone: what is left still makes a row over what it covers.
  WindowPower w = monitor.Window(0, base::RealtimeNs(), GpuSelection{false, "0"});
  ASSERT_EQ(w.rows.size(), 1u);
  EXPECT_LE(w.rows[0].reads(), 8u);
}

}  // namespace
}  // namespace opmap::agent
