// Pre-merged rollups per time bucket (schema v2), the engine-free part: which bucket a
// session belongs to and which buckets a query reads (sqlite/sqlite_buckets.h stores them).
// Private to collector/store.
//
// Why: a latency query used to read every rollup row of every selected session and
// merge its sketch, so its cost grew with the number of sessions (1,000 sessions × ~60
// rows: ~90 ms). A complete session's rows are also merged, in the same transaction,
// into `rollup_buckets` rows keyed by (resource, subject, bucket start, layer type,
// operator, kernel, module (v4)); a query reads one row per key and bucket instead of one per key
// and session.
//
// The exact split. A session is *bucketed* into bucket B = [b, b + W) when its window
// [start, end) is non-empty, set (start > 0) and lies wholly inside B; `sessions.bucket_ns`
// records b (NULL: not bucketed — its window is open, empty, or crosses a boundary).
// A query over [qs, qe) selects the sessions whose window overlaps it. For a bucket
// wholly inside the range (qs <= b and b + W <= qe), every session bucketed into it
// overlaps the range (qs <= b <= start < end <= qe), so the bucket row is exactly the
// merge of those sessions' rows. The query therefore reads
//   - bucket rows of the buckets wholly inside the range (all of them when unbounded), and
//   - per-session rows of the selected sessions NOT bucketed into one of those buckets,
// which together are each selected session exactly once. Merging is exact whatever the
// grouping: counts, sums, min and max are integers, a sketch's bins add up and its
// folding depends only on the values (ddsketch.h); the sketch's double sum is exact for
// integer nanoseconds below 2^53.
//
// The width W is fixed per file when it is created (or migrated) and kept in `meta`;
// 0 means no buckets (every query reads per-session rows, as schema v1 did).
#ifndef OPMAP_COLLECTOR_STORE_ROLLUP_BUCKETS_H_
#define OPMAP_COLLECTOR_STORE_ROLLUP_BUCKETS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/store/sketch_columns.h"
#include "opmap/v1/query.pb.h"
#include "common/base/saturating.h"

namespace opmap::collector {

// Exact count/sum/min/max of merged rows. A row of count 0 has no min or max.
struct ExactStats {
  uint64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;

  void Add(int64_t row_count, int64_t row_sum, int64_t row_min, int64_t row_max) {
    if (row_count > 0) {
      if (count == 0 || row_min < min_ns) min_ns = row_min;
      if (count == 0 || row_max > max_ns) max_ns = row_max;
    }
    // Sums across sessions saturate (common/base/saturating.h): each row is valid, their
    // sum need not fit.
    count = base::SaturatingAdd(count, static_cast<uint64_t>(row_count));
    sum_ns = base::SaturatingAdd(sum_ns, row_sum);
  }
};

// The bucket start of a complete session's window; nullopt when it is not bucketed.
std::optional<int64_t> BucketOf(int64_t window_start_ns, int64_t window_end_ns,
                                int64_t width_ns);

// The buckets a query over `range` reads pre-merged: starts in [first, last].
struct CoveredBuckets {
  bool any = false;        // false: none (or buckets are off); read per-session rows only
  bool all = false;        // unbounded range: every bucket, first/last unused
  int64_t first = 0;
  int64_t last = 0;
};
CoveredBuckets Covered(const opmap::v1::TimeRange& range, int64_t width_ns);

// The module of rollup and bucket rows stored before schema v4, when no module was
// kept: a name no module range can give (modules.h names are trimmed, printable text).
// Module groupings skip these rows; the others don't read the column.
inline constexpr std::string_view kModuleNotCollected = "\x01" "before schema v4";

// One rollup row to merge into its bucket.
struct BucketRow {
  int subject = 0;
  std::string_view layer_type, operator_name, kernel, module;
  int64_t count = 0, sum_ns = 0, min_ns = 0, max_ns = 0;
  StoredSketch sketch;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_ROLLUP_BUCKETS_H_
