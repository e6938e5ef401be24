#include "agent/counters/memory_stall.h"

#include <algorithm>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {
namespace {

const CounterReading* FindPapi(const std::vector<CounterReading>& readings,
                               absl::string_view name) {
  for (const CounterReading& r : readings) {
    if (r.source == CounterSource::kPapi && r.name == name) return &r;
  }
  return nullptr;
}

// "PAPI_TOT_CYC: <why it was not opened>", or "PAPI_TOT_CYC: not read".
std::string WhyMissing(const std::vector<CounterUnavailable>& unavailable,
                       absl::string_view name) {
  for (const CounterUnavailable& u : unavailable) {
    if (u.what == name) return absl::StrCat(name, ": ", u.reason);
  }
  return absl::StrCat(name, ": not read");
}

}  // namespace

absl::StatusOr<MemoryStallFraction> CpuMemoryStallFraction(
    const std::vector<CounterReading>& readings,
    const std::vector<CounterUnavailable>& unavailable) {
  constexpr absl::string_view kCycles = "PAPI_TOT_CYC";
  constexpr absl::string_view kMemory = "PAPI_MEM_SCY";
  constexpr absl::string_view kAnyResource = "PAPI_RES_STL";
  const std::string prefix = "CPU memory-stall fraction unavailable: ";

  const CounterReading* cycles = FindPapi(readings, kCycles);
  if (cycles == nullptr) return absl::UnavailableError(prefix + WhyMissing(unavailable, kCycles));
  MemoryStallFraction result;
  const CounterReading* stalls = FindPapi(readings, kMemory);
  result.numerator = std::string(kMemory);
  if (stalls == nullptr) {
    stalls = FindPapi(readings, kAnyResource);
    result.numerator = std::string(kAnyResource);
    result.upper_bound = true;
  }
  if (stalls == nullptr) {
    return absl::UnavailableError(absl::StrCat(prefix, WhyMissing(unavailable, kMemory), "; ",
                                               WhyMissing(unavailable, kAnyResource)));
  }
  absl::StatusOr<double> total = Scaled(*cycles);
  if (!total.ok()) return absl::UnavailableError(prefix + std::string(total.status().message()));
  absl::StatusOr<double> stalled = Scaled(*stalls);
  if (!stalled.ok()) {
    return absl::UnavailableError(prefix + std::string(stalled.status().message()));
  }
  if (*total <= 0) return absl::UnavailableError(prefix + "no cycles counted");
  // Two multiplexed estimates cover different slices of time, so their ratio can land a
  // little outside [0, 1]; that is estimation noise, not a stall share above 100%.
  result.fraction = std::clamp(*stalled / *total, 0.0, 1.0);
  return result;
}

}  // namespace opmap::agent
