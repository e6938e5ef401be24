// Durations as people read them in reports and tables: microseconds with one decimal, the
// unit opmap's tables and hand-off reports print, and milliseconds with two and the unit
// for sentences (JSON keeps exact nanoseconds or full floating microseconds).
#ifndef OPMAP_COMMON_TEXT_UNITS_H_
#define OPMAP_COMMON_TEXT_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace opmap::text {

// "12.3" for 12345 ns.
inline std::string Micros(double ns) { return absl::StrFormat("%.1f", ns / 1e3); }

// "12.35 ms" for 12345678 ns.
inline std::string MillisWithUnit(double ns) { return absl::StrFormat("%.2f ms", ns / 1e6); }

// Integer ns as exact µs with three decimals: 1234567 -> "1234.567", -1500 -> "-1.500"
// (Chrome trace timestamps, the CLI's exact figures). Appends without a temporary.
inline void AppendNanosAsMicros(int64_t ns, std::string* out) {
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out->push_back('-');
  const uint64_t frac = magnitude % 1000;
  absl::StrAppend(out, magnitude / 1000, ".");
  out->push_back(static_cast<char>('0' + frac / 100));
  out->push_back(static_cast<char>('0' + frac / 10 % 10));
  out->push_back(static_cast<char>('0' + frac % 10));
}
inline std::string FormatNanosAsMicros(int64_t ns) {
  std::string out;
  AppendNanosAsMicros(ns, &out);
  return out;
}

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_UNITS_H_
