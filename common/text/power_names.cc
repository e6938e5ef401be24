#include "common/text/power_names.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace opmap::text {

std::string ThrottleReasonNames(uint64_t bits) {
  if (bits == 0) return "none";
  // nvmlClocksEventReasons bits (NVML's values; agent/power/nvml_abi.h names them too).
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {0x1, "gpu_idle"},       {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},    {0x10, "sync_boost"},         {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},    {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (bits & bit) names.emplace_back(name);
  }
  if (bits & ~known) names.push_back(absl::StrFormat("0x%x", bits & ~known));
  return absl::StrJoin(names, ",");
}

std::string ComputeModeName(int mode) {
  switch (mode) {
    case 0: return "default";
    case 1: return "exclusive_thread";
    case 2: return "prohibited";
    case 3: return "exclusive_process";
  }
  return absl::StrCat("mode ", mode);
}

}  // namespace opmap::text
