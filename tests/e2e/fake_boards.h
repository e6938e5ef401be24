// The two boards the end-to-end power tests script into the test NVML library
// (tests/power/fake_nvml.c): "Fake H100" (GPU-aaaa0001, 700 W limit, drawing a steady
// 400 W) and "Fake L40S" (GPU-bbbb0002, 350 W limit, 200 W).
#ifndef OPMAP_TESTS_E2E_FAKE_BOARDS_H_
#define OPMAP_TESTS_E2E_FAKE_BOARDS_H_

namespace opmap::testing {

inline constexpr char kTwoBoardsNvmlScript[] =
    "gpu name=Fake_H100 uuid=GPU-aaaa0001 energy_mj=0 energy_rate_mw=400000 "
    "limit_mw=700000 sm_mhz=1980 temp_c=60 persistence=1 mig=0 compute=0\n"
    "gpu name=Fake_L40S uuid=GPU-bbbb0002 energy_mj=0 energy_rate_mw=200000 "
    "limit_mw=350000 sm_mhz=2520 temp_c=50 persistence=0 mig=0 compute=0\n";

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_E2E_FAKE_BOARDS_H_
