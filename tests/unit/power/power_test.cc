// agent/power against the test NVML library (tests/power/fake_nvml.c, dlopened the way the
// agent opens libnvidia-ml.so.1), the unavailable path on this host, and RAPL on a fixture
// powercap tree.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/power/gpu_power.h"
#include "agent/power/nvml_api.h"
#include "agent/power/rapl.h"
#include "agent/power/window_energy.h"

namespace opmap::agent {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1000000000;

// A fresh directory per test, removed after it.
class PowerDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opmap-power-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

class FakeNvmlTest : public PowerDirTest {
 protected:
  // Writes the fake's script and opens NVML through it.
  absl::StatusOr<std::unique_ptr<GpuPowerReader>> OpenWith(const std::string& script) {
    const std::string path = (dir_ / "nvml.script").string();
    std::ofstream(path) << script;
    setenv("OPMAP_FAKE_NVML_SCRIPT", path.c_str(), 1);
    absl::StatusOr<NvmlApi> api = LoadNvmlApi(OPMAP_FAKE_NVML);
    if (!api.ok()) return api.status();
    return GpuPowerReader::Open(*std::move(api));
  }
};

constexpr char kTwoGpus[] =
    "gpu name=NVIDIA_H200 energy_mj=5000000 energy_step_mj=35000 power_mw=350000 "
    "limit_mw=700000 sm_mhz=1980 mem_mhz=3201 throttle=0x44 temp_c=51 persistence=1 mig=0 "
    "compute=3\n"
    "gpu name=Tesla_P100 power_mw=300000 power_step_mw=100000 limit_mw=250000\n";

TEST_F(FakeNvmlTest, EveryFigureOfAGpuIsReadThroughTheDlopenedLibrary) {
  auto reader = OpenWith(kTwoGpus);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->gpu_count(), 2u);
  GpuState s = (*reader)->Read(0, 7 * kSecond);
  EXPECT_EQ(s.index, 0u);
  EXPECT_EQ(s.name, "NVIDIA H200");
  EXPECT_EQ(s.time_ns, 7 * kSecond);
  EXPECT_EQ(s.energy_mj.value, 5000000u);
  EXPECT_EQ(s.power_mw.value, 350000u);
  EXPECT_EQ(s.power_limit_mw.value, 700000u);
  EXPECT_EQ(s.sm_clock_mhz.value, 1980u);
  EXPECT_EQ(s.mem_clock_mhz.value, 3201u);
  EXPECT_EQ(s.throttle_reasons.value, 0x44u);
  EXPECT_EQ(ThrottleReasonNames(*s.throttle_reasons.value), "sw_power_cap,hw_thermal");
  EXPECT_EQ(s.temperature_c.value, 51u);
  EXPECT_EQ(s.persistence.value, true);
  EXPECT_EQ(s.mig.value, false);
  EXPECT_EQ(s.compute_mode.value, 3);
  EXPECT_EQ(ComputeModeName(*s.compute_mode.value), "exclusive_process");
}

TEST_F(FakeNvmlTest, AFigureTheGpuCannotGiveIsUnavailableWithNvmlsReason) {
  auto reader = OpenWith(kTwoGpus);
  ASSERT_TRUE(reader.ok()) << reader.status();
  GpuState s = (*reader)->Read(1, 0);
  EXPECT_EQ(s.name, "Tesla P100");
  EXPECT_FALSE(s.energy_mj.value.has_value());
  EXPECT_EQ(s.energy_mj.unavailable,
            "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
  EXPECT_FALSE(s.temperature_c.value.has_value());
  EXPECT_EQ(s.temperature_c.unavailable, "nvmlDeviceGetTemperature: Not Supported (NVML 3)");
  EXPECT_EQ(s.power_limit_mw.value, 250000u);
}

TEST_F(FakeNvmlTest, WindowEnergyFromTheEnergyCounter) {
  auto reader = OpenWith(kTwoGpus);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<GpuState> reads;
  for (int i = 0; i < 3; ++i) reads.push_back((*reader)->Read(0, i * kSecond));
  auto energy = EnergyOverWindow(reads);
  ASSERT_TRUE(energy.ok()) << energy.status();
  // Counter 5,000,000 → 5,070,000 mJ over 2 s.
  EXPECT_EQ(energy->method, "energy_counter");
  EXPECT_DOUBLE_EQ(energy->joules, 70.0);
  EXPECT_EQ(energy->covered_ns, 2 * kSecond);
  EXPECT_DOUBLE_EQ(energy->average_watts(), 35.0);
}

TEST_F(FakeNvmlTest, WithoutAnEnergyCounterPowerIsIntegratedAndSaysSo) {
  auto reader = OpenWith(kTwoGpus);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<GpuState> reads;
  for (int i = 0; i < 3; ++i) reads.push_back((*reader)->Read(1, i * kSecond));
  auto energy = EnergyOverWindow(reads);
  ASSERT_TRUE(energy.ok()) << energy.status();
  // 300, 400, 500 W at 0, 1, 2 s: trapezoids of 350 and 450 J.
  EXPECT_EQ(energy->method, "integrated_power");
  EXPECT_DOUBLE_EQ(energy->joules, 800.0);
  EXPECT_EQ(energy->reads, 3);
  EXPECT_DOUBLE_EQ(energy->average_watts(), 400.0);
}

TEST_F(FakeNvmlTest, ADriverThatWillNotStartIsUnavailableWithItsCode) {
  auto reader = OpenWith("init 9\n");
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::IsUnavailable(reader.status()));
  EXPECT_EQ(reader.status().message(), "nvmlInit: Driver Not Loaded (NVML 9)");
}

TEST_F(FakeNvmlTest, NoGpuIsUnavailable) {
  auto reader = OpenWith("");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), "NVML sees no GPU");
}

TEST(NvmlApiTest, AMissingLibraryIsUnavailableWithTheLoadersReason) {
  auto api = LoadNvmlApi("libopmap-no-such-nvml.so.1");
  ASSERT_FALSE(api.ok());
  EXPECT_TRUE(absl::IsUnavailable(api.status()));
  EXPECT_THAT(api.status().message(), HasSubstr("libopmap-no-such-nvml.so.1"));
}

TEST(NvmlApiTest, OnAHostWithoutADriverTheDefaultLibraryIsUnavailable) {
  auto api = LoadNvmlApi(kNvmlLibrary);
  if (api.ok()) GTEST_SKIP() << "this host has NVML (" << api->path << ")";
  EXPECT_TRUE(absl::IsUnavailable(api.status()));
  EXPECT_THAT(api.status().message(), HasSubstr("libnvidia-ml.so.1"));
}

TEST(WindowEnergyTest, OneReadOrACounterGoingBackwardsIsNoFigure) {
  GpuState a;
  a.energy_mj.value = 100;
  EXPECT_EQ(EnergyOverWindow({a}).status().message(), "energy needs two reads, the window has 1");
  GpuState b = a;
  b.time_ns = kSecond;
  b.energy_mj.value = 50;
  EXPECT_THAT(EnergyOverWindow({a, b}).status().message(), HasSubstr("went backwards"));
  GpuState c;
  c.time_ns = kSecond;
  c.energy_mj.unavailable = "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)";
  c.power_mw.unavailable = "nvmlDeviceGetPowerUsage: Not Supported (NVML 3)";
  GpuState d = c;
  d.time_ns = 0;
  EXPECT_EQ(EnergyOverWindow({d, c}).status().message(),
            "neither energy nor power was readable: nvmlDeviceGetTotalEnergyConsumption: Not "
            "Supported (NVML 3); nvmlDeviceGetPowerUsage: Not Supported (NVML 3)");
}

TEST(WindowEnergyTest, ReadsWithoutPowerAreLeftOutOfTheIntegral) {
  std::vector<GpuState> reads(4);
  for (int i = 0; i < 4; ++i) reads[i].time_ns = i * kSecond;
  reads[0].power_mw.value = 100000;
  reads[1].power_mw.unavailable = "nvmlDeviceGetPowerUsage: GPU is lost (NVML 15)";
  reads[2].power_mw.value = 200000;
  reads[3].power_mw.value = 300000;
  auto energy = EnergyOverWindow(reads);
  ASSERT_TRUE(energy.ok()) << energy.status();
  // Only the trapezoid from 2 s to 3 s: (200 + 300) / 2 W over 1 s, on 2 reads.
  EXPECT_EQ(energy->method, "integrated_power");
  EXPECT_DOUBLE_EQ(energy->joules, 250.0);
  EXPECT_EQ(energy->covered_ns, kSecond);
  EXPECT_EQ(energy->reads, 2);
}

TEST(ThrottleReasonsTest, NamesEveryBitAndKeepsUnknownOnes) {
  EXPECT_EQ(ThrottleReasonNames(0), "none");
  EXPECT_EQ(ThrottleReasonNames(0x1), "gpu_idle");
  EXPECT_EQ(ThrottleReasonNames(0x10004), "sw_power_cap,0x10000");
}

// A powercap tree as the kernel lays it out, with the entries the reader must skip.
class RaplTest : public PowerDirTest {
 protected:
  void Zone(const std::string& id, const std::string& name, const std::string& energy,
            const std::string& range) {
    std::filesystem::create_directories(dir_ / id);
    std::ofstream(dir_ / id / "name") << name << "\n";
    std::ofstream(dir_ / id / "energy_uj") << energy << "\n";
    std::ofstream(dir_ / id / "max_energy_range_uj") << range << "\n";
  }
};

TEST_F(RaplTest, PackageAndDramZonesAreReadAndTheRestSkipped) {
  Zone("intel-rapl:0", "package-0", "123456789", "262143328850");
  Zone("intel-rapl:0:0", "dram", "4242", "65712999613");
  Zone("intel-rapl-mmio:0", "package-0", "1", "262143328850");
  std::filesystem::create_directories(dir_ / "intel-rapl");
  auto reader = RaplReader::Open(dir_.string());
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ(reader->zones().size(), 2u);
  EXPECT_EQ(reader->zones()[0].id, "intel-rapl:0");
  EXPECT_EQ(reader->zones()[0].name, "package-0");
  EXPECT_EQ(reader->zones()[0].max_energy_range_uj, 262143328850u);
  EXPECT_EQ(reader->zones()[1].name, "dram");
  auto energy = reader->ReadEnergyUj();
  ASSERT_TRUE(energy.ok()) << energy.status();
  EXPECT_EQ(*energy, (std::vector<uint64_t>{123456789, 4242}));
}

TEST_F(RaplTest, ACounterThatWrappedCountsOnceAround) {
  EXPECT_EQ(RaplDeltaUj(100, 350, 1000), 250u);
  EXPECT_EQ(RaplDeltaUj(900, 50, 1000), 150u);
}

TEST_F(RaplTest, NoZoneOrAGarbledCounterIsUnavailable) {
  auto none = RaplReader::Open(dir_.string());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "no RAPL zone under " + dir_.string());
  auto missing = RaplReader::Open((dir_ / "absent").string());
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));
  Zone("intel-rapl:0", "package-0", "lots", "262143328850");
  auto garbled = RaplReader::Open(dir_.string());
  ASSERT_FALSE(garbled.ok());
  EXPECT_THAT(garbled.status().message(), HasSubstr("not a counter: 'lots'"));
}

}  // namespace
}  // namespace opmap::agent
