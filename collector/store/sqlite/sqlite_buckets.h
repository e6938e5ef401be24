// The SQLite side of the time buckets (collector/store/rollup_buckets.h has the rule):
// resource ids, merging a complete session's rollup rows into their bucket row, and the
// schema v1 → v2 migration that builds buckets from stored rollups. Private to
// collector/store/sqlite.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sqlite/sqlite_db.h"

namespace opmap::collector {

// The id of a (host, model, revision, labels_json) row in `resources`, added if new.
absl::StatusOr<int64_t> ResourceId(sqlite::Database& db, std::string_view host,
                                   std::string_view model, std::string_view revision,
                                   std::string_view labels_json);

// Merges `row` into the bucket row of (resource, bucket) — inside the caller's transaction.
absl::Status MergeIntoBucket(sqlite::Database& db, int64_t resource_id, int64_t bucket_ns,
                             const BucketRow& row);

// Schema v1 → v2: assigns the complete sessions to buckets and merges their stored rows
// (inside the caller's transaction). Returns the number of sessions bucketed.
absl::StatusOr<int64_t> BuildBucketsFromRollups(sqlite::Database& db, int64_t width_ns);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_
