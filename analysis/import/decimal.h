// Exact conversion of Kineto's microsecond numbers ("1419247333430.849") to integer ns.
// A double holds epoch µs to only ~0.25 µs, so the text is converted digit by digit.
#ifndef OPMAP_ANALYSIS_IMPORT_DECIMAL_H_
#define OPMAP_ANALYSIS_IMPORT_DECIMAL_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace opmap::analysis {

// Parses a JSON number given in microseconds and returns nanoseconds, rounding digits
// beyond the third fractional one half away from zero. Accepts exponents (via a slower
// exact path). Returns nullopt for text that is not a JSON number or overflows int64.
std::optional<int64_t> MicrosTextToNanos(std::string_view text);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_DECIMAL_H_
