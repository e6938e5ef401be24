// Small formatting pieces every report renderer shares: µs from ns, the --top row limit
// and the p50/p95/p99 JSON fields (names in tables: common/text/printable.h).
#ifndef OPMAP_ANALYSIS_REPORT_REPORT_FIELDS_H_
#define OPMAP_ANALYSIS_REPORT_REPORT_FIELDS_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/text/json_writer.h"
#include "analysis/stats/quantiles.h"

namespace opmap::analysis::report_fields {

inline double Us(double ns) { return ns / 1000.0; }

// Rows to show of `available` under --top (0 = all).
inline size_t Rows(size_t available, int top) {
  return top > 0 ? std::min<size_t>(available, static_cast<size_t>(top)) : available;
}

inline void PercentileFields(text::JsonWriter& w, const stats::Percentiles& p) {
  w.Field("p50_us", Us(p.p50)).Field("p95_us", Us(p.p95)).Field("p99_us", Us(p.p99));
  // Past the memory budget (value_counts.h): say so on the row itself.
  if (p.sketched) w.Field("percentiles", "ddsketch");
}

}  // namespace opmap::analysis::report_fields

#endif  // OPMAP_ANALYSIS_REPORT_REPORT_FIELDS_H_
