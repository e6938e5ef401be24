// Durations as people read them in reports and tables: microseconds with one decimal, the
// unit opmap's tables and hand-off reports print, and milliseconds with two and the unit
// for sentences (JSON keeps exact nanoseconds or full floating microseconds).
#ifndef OPMAP_COMMON_TEXT_UNITS_H_
#define OPMAP_COMMON_TEXT_UNITS_H_

#include <string>

#include "absl/strings/str_format.h"

namespace opmap::text {

// "12.3" for 12345 ns.
inline std::string Micros(double ns) { return absl::StrFormat("%.1f", ns / 1e3); }

// "12.35 ms" for 12345678 ns.
inline std::string MillisWithUnit(double ns) { return absl::StrFormat("%.2f ms", ns / 1e6); }

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_UNITS_H_
