// The names opmap prints for NVML's power vocabulary (telemetry.proto PowerSample): the
// clocks-event (throttle) reason bits and the compute modes, so `opmap-agent power`,
// `opmap query power` and the reports say the same words for the same bits.
#ifndef OPMAP_COMMON_TEXT_POWER_NAMES_H_
#define OPMAP_COMMON_TEXT_POWER_NAMES_H_

#include <cstdint>
#include <string>

namespace opmap::text {

// "sw_power_cap,hw_thermal"; "none" for 0; unknown bits as "0x..." so nothing is hidden.
std::string ThrottleReasonNames(uint64_t bits);
// "default", "exclusive_process", "prohibited", "exclusive_thread", or "mode N".
std::string ComputeModeName(int mode);

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_POWER_NAMES_H_
