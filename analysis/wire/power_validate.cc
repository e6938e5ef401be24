// ValidatePower: the checks on Batch.power (telemetry.proto PowerSample). Power rows end
// up in every per-watt figure a report prints, so a row that could not be a real reading
// (energy without a span, an average above any board's draw, a span backwards in time) is
// refused with its path rather than stored and averaged in.
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "analysis/wire/wire_validate.h"

namespace opmap::analysis::wire_internal {
namespace {

constexpr int kMaxPowerRows = 1024;         // a host has dozens of GPUs and zones, not more
constexpr size_t kMaxPowerText = 256;       // device, name
constexpr int kMaxPowerUnavailable = 32;    // one per figure, with room
constexpr size_t kMaxUnavailableText = 1024;
// No device draws 100 kW: an average above it is a forged or broken counter.
constexpr double kMaxAverageWatts = 100'000;

}  // namespace

absl::Status ValidatePower(const opmap::v1::Batch& batch, std::string* field) {
  const auto& rows = batch.power();
  if (rows.size() > kMaxPowerRows) {
    return Reject(opmap::v1::REJECTION_CODE_TOO_LARGE, "power",
                  absl::StrFormat("%d rows, over the limit of %d", rows.size(), kMaxPowerRows),
                  field);
  }
  for (int i = 0; i < rows.size(); ++i) {
    const opmap::v1::PowerSample& p = rows[i];
    auto bad = [&](const char* name, const std::string& what) {
      return Reject(opmap::v1::REJECTION_CODE_INVALID_VALUE,
                    absl::StrFormat("power[%d].%s", i, name), what, field);
    };
    if (!opmap::v1::PowerDomain_IsValid(p.domain()) ||
        p.domain() == opmap::v1::POWER_DOMAIN_UNSPECIFIED) {
      return bad("domain", absl::StrFormat("invalid power domain %d", p.domain()));
    }
    if (p.device().empty()) return bad("device", "empty");
    if (p.device().size() > kMaxPowerText || p.name().size() > kMaxPowerText) {
      return bad(p.device().size() > kMaxPowerText ? "device" : "name",
                 absl::StrFormat("over the limit of %d bytes", kMaxPowerText));
    }
    if (p.start_ns() > kMaxTimestampNs || p.start_ns() < -kMaxTimestampNs ||
        p.end_ns() > kMaxTimestampNs || p.end_ns() < -kMaxTimestampNs) {
      return bad("start_ns", "timestamp outside ±2^62 ns");
    }
    if (p.end_ns() < p.start_ns()) {
      return bad("end_ns", absl::StrFormat("%d ns is before start_ns %d", p.end_ns(),
                                           p.start_ns()));
    }
    if (p.covered_ns() < 0 || p.covered_ns() > p.end_ns() - p.start_ns()) {
      return bad("covered_ns", absl::StrFormat("%d ns is outside [0, end_ns - start_ns = %d]",
                                               p.covered_ns(), p.end_ns() - p.start_ns()));
    }
    if (p.has_energy_mj()) {
      if (p.covered_ns() == 0) return bad("covered_ns", "energy over no time");
      if (!opmap::v1::EnergyMethod_IsValid(p.method()) ||
          p.method() == opmap::v1::ENERGY_METHOD_UNSPECIFIED) {
        return bad("method", absl::StrFormat("energy without a valid method (%d)", p.method()));
      }
      if (p.reads() < 2) return bad("reads", "energy needs at least two reads");
      const double watts = static_cast<double>(p.energy_mj()) * 1e6 / p.covered_ns();
      if (watts > kMaxAverageWatts) {
        return bad("energy_mj", absl::StrFormat("%d mJ over %d ns is %.0f W on average, over "
                                                "%.0f W", p.energy_mj(), p.covered_ns(), watts,
                                                kMaxAverageWatts));
      }
    }
    if (p.has_power_limit_mw() && p.power_limit_mw() > kMaxAverageWatts * 1e3) {
      return bad("power_limit_mw", absl::StrFormat("%d mW is over %.0f W", p.power_limit_mw(),
                                                   kMaxAverageWatts));
    }
    if (p.has_throttle_reasons() && (p.throttle_reasons() >> 63) != 0) {
      return bad("throttle_reasons", "bit 63 is no NVML clocks-event reason");
    }
    if (p.unavailable_size() > kMaxPowerUnavailable) {
      return bad("unavailable", absl::StrFormat("%d entries, over the limit of %d",
                                                p.unavailable_size(), kMaxPowerUnavailable));
    }
    for (const opmap::v1::Unavailable& u : p.unavailable()) {
      if (u.what().size() > kMaxUnavailableText || u.reason().size() > kMaxUnavailableText) {
        return bad("unavailable", absl::StrFormat("an entry over %d bytes", kMaxUnavailableText));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace opmap::analysis::wire_internal
