// collector/session_telemetry.h: a session's power rows merged per device (a window an
// agent split in two adds up), their per-figure reasons kept as "power <device> <figure>",
// and the device bound.
#include <string>

#include <gtest/gtest.h>

#include "analysis/wire/batch_codec.h"
#include "collector/session_telemetry.h"

namespace opmap::collector {
namespace {

opmap::v1::PowerSample Row(const std::string& device, int64_t start, int64_t end, uint64_t mj,
                           uint32_t temp) {
  opmap::v1::PowerSample p;
  p.set_domain(opmap::v1::POWER_DOMAIN_GPU);
  p.set_device(device);
  p.set_name("NVIDIA H200");
  p.set_start_ns(start);
  p.set_end_ns(end);
  p.set_covered_ns(end - start);
  p.set_energy_mj(mj);
  p.set_method(opmap::v1::ENERGY_METHOD_COUNTER);
  p.set_reads(2);
  p.set_temperature_c(temp);
  p.set_throttle_reasons(temp > 60 ? 0x40 : 0x4);
  p.set_power_limit_mw(temp > 60 ? 500'000 : 700'000);
  return p;
}

TEST(TelemetryAccumulator, PowerRowsOfOneDeviceAddUpAndKeepTheirReasons) {
  analysis::SessionAssembler assembler;
  TelemetryAccumulator acc;
  opmap::v1::Batch b;
  *b.add_power() = Row("GPU-a", 2'000, 3'000, 400, 70);  // the later half first
  *b.add_power() = Row("GPU-a", 1'000, 2'000, 300, 50);
  opmap::v1::PowerSample other = Row("GPU-b", 1'000, 3'000, 0, 40);
  other.clear_energy_mj();
  opmap::v1::Unavailable* u = other.add_unavailable();
  u->set_what("energy_mj");
  u->set_reason("no counter");
  *b.add_power() = other;
  acc.Add(b, assembler);
  const SessionTelemetry t = acc.Finish(assembler.trace().strings);
  ASSERT_EQ(t.power.size(), 2u);
  const opmap::v1::PowerSample& a = t.power[0];
  EXPECT_EQ(a.device(), "GPU-a");
  EXPECT_EQ(a.start_ns(), 1'000);
  EXPECT_EQ(a.end_ns(), 3'000);
  EXPECT_EQ(a.energy_mj(), 700u);
  EXPECT_EQ(a.covered_ns(), 2'000);
  EXPECT_EQ(a.reads(), 4u);
  EXPECT_EQ(a.temperature_c(), 70u);           // the hotter of the two
  EXPECT_EQ(a.throttle_reasons(), 0x44u);      // both halves' reasons
  EXPECT_EQ(a.power_limit_mw(), 500'000u);     // the later row's mode
  EXPECT_FALSE(t.power[1].has_energy_mj());
  ASSERT_EQ(t.unavailable.size(), 1u);
  EXPECT_EQ(t.unavailable[0].first, "power GPU-b energy_mj");
  EXPECT_EQ(t.unavailable[0].second, "no counter");
}

TEST(TelemetryAccumulator, PowerDevicesPastTheLimitAreCountedNotKept) {
  analysis::SessionAssembler assembler;
  TelemetryAccumulator acc;
  opmap::v1::Batch b;
  for (size_t i = 0; i < TelemetryAccumulator::kMaxPowerDevices + 3; ++i) {
    *b.add_power() = Row("GPU-" + std::to_string(i), 0, 10, 1, 40);
  }
  acc.Add(b, assembler);
  const SessionTelemetry t = acc.Finish(assembler.trace().strings);
  EXPECT_EQ(t.power.size(), TelemetryAccumulator::kMaxPowerDevices);
  ASSERT_EQ(t.unavailable.size(), 1u);
  EXPECT_EQ(t.unavailable[0].second,
            "3 rows of devices past the collector's limit of 256 devices per session were not "
            "kept");
}

}  // namespace
}  // namespace opmap::collector
