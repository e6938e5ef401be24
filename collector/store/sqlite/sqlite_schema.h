// The SQLite store's schema (tables in sqlite_store.h): created idempotently, a version 1
// to 3 file migrated in place, a newer one refused. Private to collector/store.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_SCHEMA_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_SCHEMA_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/store/sqlite/sqlite_db.h"
#include "collector/store/sqlite/sqlite_store.h"

namespace opmap::collector {

// Pragmas every connection to the file gets (busy timeout, synchronous, cache size).
absl::Status ConfigureConnection(sqlite::Database& db, const SqliteStoreOptions& options);

// On the writer's connection at open: WAL, the pragmas, then under the write lock the
// schema (created, or migrated from version 1: sessions.bucket_ns added, the v2 tables
// created and the stored rollups merged into buckets; from version 1 or 2:
// sessions.host_rollup added (0 for the sessions already there), the v3 session_*
// tables created; from version 1 to 3: sessions.module_rollup and rollups.module added,
// rollup_buckets rebuilt with the module in its key, the stored rows' module set to
// kModuleNotCollected). Returns the file's bucket width.
absl::StatusOr<int64_t> SetUpSchema(sqlite::Database& db, const SqliteStoreOptions& options);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_SCHEMA_H_
