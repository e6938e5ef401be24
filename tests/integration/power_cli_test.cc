// `opmap-agent power`, the real binary: against the test NVML library (tests/power/,
// dlopened through --nvml-library exactly as libnvidia-ml.so.1 would be) and a fixture
// powercap tree, then the `unavailable` path this host (no driver, no RAPL) takes.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "tests/integration/collector_fixture.h"
#include "tests/testing/run_process.h"

namespace opmap {
namespace {

using ::testing::HasSubstr;

const char kAgent[] = OPMAP_BIN_DIR "/opmap-agent";

class PowerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string zone = dir_.File("powercap/intel-rapl:0");
    std::filesystem::create_directories(zone);
    testing::WriteFileOrDie(zone + "/name", "package-0\n");
    testing::WriteFileOrDie(zone + "/energy_uj", "9000000\n");
    testing::WriteFileOrDie(zone + "/max_energy_range_uj", "262143328850\n");
    testing::WriteFileOrDie(
        dir_.File("nvml.script"),
        "gpu name=NVIDIA_H200 energy_mj=1000 energy_step_mj=35000 power_mw=350000 "
        "limit_mw=500000 sm_mhz=1755 mem_mhz=3201 throttle=0x4 temp_c=48 persistence=1 "
        "mig=1 compute=0\n");
  }
  testing::TempDir dir_;
};

TEST_F(PowerCliTest, ScriptedGpuAndRaplZoneOverAWindow) {
  testing::ProcessResult r = testing::RunProcess(
      kAgent,
      {"power", "--duration", "300ms", "--interval", "100ms", "--json", "--nvml-library",
       OPMAP_FAKE_NVML, "--powercap-root", dir_.File("powercap")},
      {{"OPMAP_FAKE_NVML_SCRIPT", dir_.File("nvml.script")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array gpus = doc["gpus"].get_array();
  ASSERT_EQ(gpus.size(), 1u) << r.out;
  simdjson::dom::element gpu = gpus.at(0);
  EXPECT_EQ(std::string_view(gpu["name"].get_string()), "NVIDIA H200");
  // Reads at 0, 100, 200 and 300 ms: the counter advanced three steps of 35 J.
  EXPECT_EQ(int64_t(gpu["reads"].get_int64()), 2);  // the counter's two ends
  EXPECT_DOUBLE_EQ(double(gpu["energy_j"].get_double()), 105.0);
  EXPECT_EQ(std::string_view(gpu["energy_method"].get_string()), "energy_counter");
  const double watts = gpu["average_w"].get_double();
  EXPECT_GT(watts, 200.0);   // 105 J over a window of at least 300 ms...
  EXPECT_LE(watts, 350.01);  // ...and at most a loaded machine's stretch of it
  EXPECT_EQ(int64_t(gpu["power_limit_mw"].get_int64()), 500000);
  EXPECT_EQ(int64_t(gpu["sm_clock_mhz"].get_int64()), 1755);
  EXPECT_EQ(std::string_view(gpu["throttle"].get_string()), "sw_power_cap");
  EXPECT_EQ(bool(gpu["mig"].get_bool()), true);
  EXPECT_EQ(bool(gpu["persistence"].get_bool()), true);
  EXPECT_EQ(int64_t(gpu["compute_mode"].get_int64()), 0);
  simdjson::dom::array zones = doc["cpu_zones"].get_array();
  ASSERT_EQ(zones.size(), 1u);
  EXPECT_EQ(std::string_view(zones.at(0)["name"].get_string()), "package-0");
  EXPECT_DOUBLE_EQ(double(zones.at(0)["energy_j"].get_double()), 0.0);  // a still fixture
}

TEST_F(PowerCliTest, WithoutADriverOrRaplEveryFigureSaysWhyItIsMissing) {
  testing::ProcessResult r = testing::RunProcess(
      kAgent, {"power", "--duration", "50ms", "--powercap-root", dir_.File("absent")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!std::filesystem::exists("/dev/nvidia0")) {
    EXPECT_THAT(r.out, HasSubstr("gpu: unavailable: libnvidia-ml.so.1: cannot open shared object"));
  }
  EXPECT_THAT(r.out, HasSubstr("cpu: unavailable: no RAPL zone under " +
                               dir_.File("absent") + " (No such file or directory)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr(" 0.000 J")));
}

TEST_F(PowerCliTest, ABadFlagIsExitTwoNamingIt) {
  testing::ProcessResult r = testing::RunProcess(kAgent, {"power", "--duration", "11m"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("opmap-agent power: --duration: at most 10m"));
  r = testing::RunProcess(kAgent, {"power", "--watts"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--watts"));
}

}  // namespace
}  // namespace opmap
