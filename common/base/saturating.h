// Sums that cannot wrap: counts and nanoseconds added across events, sessions and windows
// stop at the type's maximum instead of going negative (docs/metrics.md, "Sums"). Each
// value is checked where it enters; a sum of valid values can still pass 2^63 ns (a
// fleet's kernels over years, or a hostile peer's maximal durations), and then saturates.
#ifndef OPMAP_COMMON_BASE_SATURATING_H_
#define OPMAP_COMMON_BASE_SATURATING_H_

#include <cstdint>
#include <limits>

namespace opmap::base {

// a + b, stopping at INT64_MAX (and at INT64_MIN for negative addends).
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t out;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

// total += v, saturating.
template <typename T>
inline void AddSaturating(T& total, T v) {
  total = SaturatingAdd(total, v);
}

}  // namespace opmap::base

#endif  // OPMAP_COMMON_BASE_SATURATING_H_
