// The SQLite side of the time buckets (collector/store/rollup_buckets.h has the rule):
// resource ids, merging a complete session's rollup rows into their bucket row, and the
// schema v1 → v2 migration that builds buckets from stored rollups. Private to
// collector/store/sqlite.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sqlite/sqlite_db.h"

namespace opmap::collector {

// The id of a (host, model, revision, labels_json) row in `resources`, added if new.
absl::StatusOr<int64_t> ResourceId(sqlite::Database& db, std::string_view host,
                                   std::string_view model, std::string_view revision,
                                   std::string_view labels_json);

// Merges `rows` (all of one key: subject, layer type, operator, kernel, module) into the
// bucket row of (resource, bucket) — one read and one write, inside the caller's
// transaction.
absl::Status MergeIntoBucket(sqlite::Database& db, int64_t resource_id, int64_t bucket_ns,
                             absl::Span<const BucketRow> rows);

// Bucket rows gathered in memory, then merged into rollup_buckets once per key: the
// sessions of one group commit (and the v1 -> v2 migration's) share most keys, and each
// merge is a read, a sketch decode/merge/encode and a write.
class BucketMerger {
 public:
  void Add(int64_t resource_id, int64_t bucket_ns, const BucketRow& row);  // copies it
  // Moves every row of `other` here (a batch whose savepoint was released).
  void Absorb(BucketMerger& other);
  void Clear() { rows_.clear(); }
  bool empty() const { return rows_.empty(); }
  // MergeIntoBucket per key, in key order; then empty.
  absl::Status Flush(sqlite::Database& db);

 private:
  struct Owned {
    int64_t count, sum_ns, min_ns, max_ns;
    int scale;
    int32_t offset;
    std::string bins;
    uint64_t zero_count;
    double sum, min, max;
  };
  // (resource, bucket, subject, layer type, operator, kernel, module). Hashed, not
  // ordered: a group of small windows adds each of its few hundred keys once per window,
  // and an ordered map compared up to four strings per level for each; Flush sorts the
  // keys once.
  using Key = std::tuple<int64_t, int64_t, int, std::string, std::string, std::string,
                         std::string>;
  absl::flat_hash_map<Key, std::vector<Owned>> rows_;
};

// Schema v1 → v2: assigns the complete sessions to buckets and merges their stored rows
// (inside the caller's transaction). Returns the number of sessions bucketed.
absl::StatusOr<int64_t> BuildBucketsFromRollups(sqlite::Database& db, int64_t width_ns);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_BUCKETS_H_
