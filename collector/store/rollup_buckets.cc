#include "collector/store/rollup_buckets.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/stats/ddsketch.h"

namespace opmap::collector {

std::optional<int64_t> BucketOf(int64_t window_start_ns, int64_t window_end_ns,
                                int64_t width_ns) {
  // start 0 is "unset" and end 0 "still open" in the sessions table; an empty window
  // overlaps no range that starts at it, while its bucket might lie inside one.
  if (width_ns <= 0 || window_start_ns <= 0 || window_end_ns <= window_start_ns) {
    return std::nullopt;
  }
  const int64_t b = window_start_ns - window_start_ns % width_ns;
  if (b > std::numeric_limits<int64_t>::max() - width_ns) return std::nullopt;
  if (window_end_ns > b + width_ns) return std::nullopt;  // crosses the boundary
  return b;
}

CoveredBuckets Covered(const opmap::v1::TimeRange& range, int64_t width_ns) {
  CoveredBuckets c;
  if (width_ns <= 0) return c;
  if (range.start_ns() == 0 && range.end_ns() == 0) {
    c.any = c.all = true;
    return c;
  }
  // Bucket starts b (multiples of W) with start <= b and b + W <= end; in 128 bits, as
  // the range may reach either end of int64.
  auto floor_div = [](__int128 a, __int128 w) { return a >= 0 ? a / w : -((-a + w - 1) / w); };
  const __int128 w = width_ns;
  const __int128 first = -floor_div(-static_cast<__int128>(range.start_ns()), w) * w;  // ceil
  const __int128 last = floor_div(static_cast<__int128>(range.end_ns()) - w, w) * w;
  if (first > last) return c;
  c.any = true;
  c.first = static_cast<int64_t>(first);  // within [start, end - W]: fits
  c.last = static_cast<int64_t>(last);
  return c;
}

}  // namespace opmap::collector
