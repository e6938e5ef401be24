// The store's schema: creation, the v1 → v2 → v3 → v4 migrations, and per-connection pragmas.
#include "collector/store/sqlite/sqlite_schema.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sqlite/sqlite_buckets.h"

namespace opmap::collector {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS sessions(
  id INTEGER PRIMARY KEY,
  agent TEXT NOT NULL,
  session TEXT NOT NULL,
  last_seq INTEGER NOT NULL DEFAULT 0,
  string_count INTEGER NOT NULL DEFAULT 0,
  complete INTEGER NOT NULL DEFAULT 0,
  host TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  revision TEXT NOT NULL DEFAULT '',
  labels_json TEXT NOT NULL DEFAULT '{}',
  window_start_ns INTEGER NOT NULL DEFAULT 0,
  window_end_ns INTEGER NOT NULL DEFAULT 0,
  gpu_event_count INTEGER NOT NULL DEFAULT 0,
  gpu_time_ns INTEGER NOT NULL DEFAULT 0,
  rule_graph_node INTEGER NOT NULL DEFAULT 0,
  rule_external_id INTEGER NOT NULL DEFAULT 0,
  rule_launch_nesting INTEGER NOT NULL DEFAULT 0,
  rule_graph_launch INTEGER NOT NULL DEFAULT 0,
  rule_unmapped INTEGER NOT NULL DEFAULT 0,
  bucket_ns INTEGER,
  host_rollup INTEGER NOT NULL DEFAULT 0,
  module_rollup INTEGER NOT NULL DEFAULT 0,
  UNIQUE(agent, session));
CREATE TABLE IF NOT EXISTS batches(
  session_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  received_ns INTEGER NOT NULL,
  window_start_ns INTEGER NOT NULL,
  window_end_ns INTEGER NOT NULL,
  records INTEGER NOT NULL,
  payload BLOB NOT NULL,
  PRIMARY KEY(session_id, seq));
CREATE TABLE IF NOT EXISTS rollups(
  session_id INTEGER NOT NULL,
  subject INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  layer_type TEXT NOT NULL,
  operator TEXT NOT NULL,
  kernel TEXT NOT NULL,
  count INTEGER NOT NULL,
  sum_ns INTEGER NOT NULL,
  min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL,
  sketch_scale INTEGER NOT NULL,
  sketch_offset INTEGER NOT NULL,
  sketch_zero INTEGER NOT NULL,
  sketch_sum REAL NOT NULL,
  sketch_min REAL NOT NULL,
  sketch_max REAL NOT NULL,
  sketch_bins BLOB NOT NULL,
  module TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(session_id, subject, ordinal)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS device_times(
  session_id INTEGER NOT NULL,
  device INTEGER NOT NULL,
  gpu_uuid TEXT NOT NULL,
  gpu_name TEXT NOT NULL,
  span_ns INTEGER NOT NULL,
  busy_ns INTEGER NOT NULL,
  idle_ns INTEGER NOT NULL,
  compute_ns INTEGER NOT NULL,
  non_compute_ns INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  PRIMARY KEY(session_id, device)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta(
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS resources(
  id INTEGER PRIMARY KEY,
  host TEXT NOT NULL,
  model TEXT NOT NULL,
  revision TEXT NOT NULL,
  labels_json TEXT NOT NULL,
  UNIQUE(host, model, revision, labels_json));
CREATE TABLE IF NOT EXISTS session_counters(
  session_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  source INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  value INTEGER NOT NULL,
  time_enabled_ns INTEGER NOT NULL,
  time_running_ns INTEGER NOT NULL,
  PRIMARY KEY(session_id, name, source, pid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_drops(
  session_id INTEGER NOT NULL,
  stage INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  reason TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY(session_id, stage, kind, reason)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_power(
  session_id INTEGER NOT NULL,
  domain INTEGER NOT NULL,
  device TEXT NOT NULL,
  name TEXT NOT NULL,
  gpu_index INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  covered_ns INTEGER NOT NULL,
  energy_mj INTEGER,
  method INTEGER NOT NULL,
  reads INTEGER NOT NULL,
  power_limit_mw INTEGER,
  sm_clock_mhz INTEGER,
  memory_clock_mhz INTEGER,
  throttle_reasons INTEGER,
  temperature_c INTEGER,
  persistence INTEGER,
  mig INTEGER,
  compute_mode INTEGER,
  PRIMARY KEY(session_id, domain, device)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_unavailable(
  session_id INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  what TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY(session_id, ordinal)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signoffs(
  id INTEGER PRIMARY KEY,
  report_sha256 TEXT NOT NULL,
  kind TEXT NOT NULL,
  baseline TEXT NOT NULL,
  candidate TEXT NOT NULL,
  verdict TEXT NOT NULL,
  owner TEXT NOT NULL,
  role TEXT NOT NULL,
  signed_ns INTEGER NOT NULL,
  principal TEXT NOT NULL,
  UNIQUE(report_sha256, owner, role));
CREATE INDEX IF NOT EXISTS signoffs_subject ON signoffs(kind, baseline, candidate);
)sql";

// rollup_buckets (%s: its name): the module is part of the key since v4, so a v2/v3
// table is rebuilt rather than altered (a primary key can't be).
constexpr char kRollupBuckets[] = R"sql(
CREATE TABLE IF NOT EXISTS %s(
  resource_id INTEGER NOT NULL,
  subject INTEGER NOT NULL,
  bucket_ns INTEGER NOT NULL,
  layer_type TEXT NOT NULL,
  operator TEXT NOT NULL,
  kernel TEXT NOT NULL,
  module TEXT NOT NULL,
  count INTEGER NOT NULL,
  sum_ns INTEGER NOT NULL,
  min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL,
  sketch_scale INTEGER NOT NULL,
  sketch_offset INTEGER NOT NULL,
  sketch_zero INTEGER NOT NULL,
  sketch_sum REAL NOT NULL,
  sketch_min REAL NOT NULL,
  sketch_max REAL NOT NULL,
  sketch_bins BLOB NOT NULL,
  PRIMARY KEY(resource_id, subject, bucket_ns, layer_type, operator, kernel, module))
  WITHOUT ROWID;
)sql";

// Whether `table` has `column` (a migration step that ran once must not run again).
absl::StatusOr<bool> HasColumn(sqlite::Database& db, const char* table, const char* column) {
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db.Prepare(absl::StrFormat("SELECT 1 FROM pragma_table_info('%s') "
                                              "WHERE name = '%s'", table, column)));
  return st.Step();
}

}  // namespace

// Pragmas every connection to the file gets.
absl::Status ConfigureConnection(sqlite::Database& db, const SqliteStoreOptions& options) {
  // The busy timeout first: switching to WAL needs a lock another process may hold.
  RETURN_IF_ERROR(db.Exec(absl::StrFormat("PRAGMA busy_timeout=%d", options.busy_timeout_ms)));
  RETURN_IF_ERROR(
      db.Exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  // Checkpoints run behind the commits (wal_checkpointer.h), so under sustained ingest
  // the WAL file peaks well past the checkpoint size (~100 MB at 1.4 M kernels/s here);
  // the first commit after the WAL starts over truncates it back to this.
  RETURN_IF_ERROR(db.Exec(
      absl::StrFormat("PRAGMA journal_size_limit=%d", 4 * options.checkpoint_bytes)));
  // Rollup queries re-read selected sessions' rows: keep them cached (32 MiB).
  return db.Exec("PRAGMA cache_size=-32768");
}

// Creates or migrates the schema; returns the file's rollup bucket width.
absl::StatusOr<int64_t> SetUpSchema(sqlite::Database& db, const SqliteStoreOptions& options) {
  // The first statement that reads the file: a foreign file fails here (SQLITE_NOTADB).
  RETURN_IF_ERROR(db.Exec(absl::StrFormat("PRAGMA busy_timeout=%d", options.busy_timeout_ms)));
  ASSIGN_OR_RETURN(std::string mode, db.PragmaValue("PRAGMA journal_mode=WAL"));
  if (mode != "wal" && db.path() != ":memory:") {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: cannot use write-ahead logging (journal_mode is \"%s\"); the store needs it "
        "for durable, concurrent commits",
        db.path(), mode));
  }
  RETURN_IF_ERROR(ConfigureConnection(db, options));
  // A damaged file stops the collector here with a clear error, instead of answering
  // queries from changed data later (docs/operations.md, "A damaged store"). quick_check
  // reads every page once: seconds per GB at start-up.
  if (db.path() != ":memory:") {
    absl::StatusOr<std::string> check = db.PragmaValue("PRAGMA quick_check");
    if (!check.ok() || *check != "ok") {
      return absl::DataLossError(absl::StrFormat(
          "%s: the store failed PRAGMA quick_check (%s); it is not opened: move it aside and "
          "restore the last backup (docs/operations.md, \"A damaged store\")",
          db.path(), check.ok() ? *check : std::string(check.status().message())));
    }
  }

  // Checked and created under the write lock, so two processes opening a new file at
  // once create (or migrate) the schema once.
  ASSIGN_OR_RETURN(sqlite::Transaction tx, sqlite::Transaction::Begin(db));
  ASSIGN_OR_RETURN(std::string version_text, db.PragmaValue("PRAGMA user_version"));
  const int version = std::atoi(version_text.c_str());
  if (version > SqliteStore::kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: schema version %d is newer than this collector supports (%d)", db.path(), version,
        SqliteStore::kSchemaVersion));
  }
  // v1 → v2: the sessions table gains bucket_ns; the new tables are created below.
  if (version == 1) RETURN_IF_ERROR(db.Exec("ALTER TABLE sessions ADD COLUMN bucket_ns INTEGER"));
  // v2 → v3: sessions gain host_rollup (0: rolled up before request / operator-CPU rows
  // and counters were kept; queries say so); the session_* tables are created below.
  if (version >= 1 && version < 3) {
    ASSIGN_OR_RETURN(const bool has, HasColumn(db, "sessions", "host_rollup"));
    if (!has) {
      RETURN_IF_ERROR(db.Exec(
          "ALTER TABLE sessions ADD COLUMN host_rollup INTEGER NOT NULL DEFAULT 0"));
    }
  }
  // v1..v3 → v4: sessions gain module_rollup (0: rolled up without modules); the stored
  // rollup rows and bucket rows get the module kModuleNotCollected, which module
  // groupings skip (and name the sessions as unavailable) while the other groupings,
  // which do not read the column, merge them as before; rollup_buckets is rebuilt with
  // the module in its key.
  if (version >= 1 && version < 4) {
    ASSIGN_OR_RETURN(const bool has_flag, HasColumn(db, "sessions", "module_rollup"));
    if (!has_flag) {
      RETURN_IF_ERROR(db.Exec(
          "ALTER TABLE sessions ADD COLUMN module_rollup INTEGER NOT NULL DEFAULT 0"));
    }
    ASSIGN_OR_RETURN(const bool has_module, HasColumn(db, "rollups", "module"));
    if (!has_module) {
      RETURN_IF_ERROR(db.Exec("ALTER TABLE rollups ADD COLUMN module TEXT NOT NULL DEFAULT ''"));
      ASSIGN_OR_RETURN(sqlite::Statement st, db.Prepare("UPDATE rollups SET module = ?1"));
      st.BindText(1, kModuleNotCollected);
      RETURN_IF_ERROR(st.Run());
    }
    if (version >= 2) {
      ASSIGN_OR_RETURN(const bool buckets_have_module,
                       HasColumn(db, "rollup_buckets", "module"));
      if (!buckets_have_module) {
        RETURN_IF_ERROR(db.Exec(absl::StrFormat(kRollupBuckets, "rollup_buckets_v4")));
        constexpr char kColumns[] =
            "resource_id, subject, bucket_ns, layer_type, operator, kernel, count, sum_ns, "
            "min_ns, max_ns, sketch_scale, sketch_offset, sketch_zero, sketch_sum, "
            "sketch_min, sketch_max, sketch_bins";
        ASSIGN_OR_RETURN(sqlite::Statement st,
                         db.Prepare(absl::StrFormat("INSERT INTO rollup_buckets_v4(%s, module) "
                                                    "SELECT %s, ?1 FROM rollup_buckets",
                                                    kColumns, kColumns)));
        st.BindText(1, kModuleNotCollected);
        RETURN_IF_ERROR(st.Run());
        RETURN_IF_ERROR(db.Exec("DROP TABLE rollup_buckets"));
        RETURN_IF_ERROR(db.Exec("ALTER TABLE rollup_buckets_v4 RENAME TO rollup_buckets"));
      }
    }
  }
  RETURN_IF_ERROR(db.Exec(kSchema));
  RETURN_IF_ERROR(db.Exec(absl::StrFormat(kRollupBuckets, "rollup_buckets")));
  int64_t bucket_ns = 0;
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare("SELECT value FROM meta WHERE key = 'rollup_bucket_ns'"));
    ASSIGN_OR_RETURN(bool found, st.Step());
    if (found) {
      bucket_ns = st.Int(0);
    } else if (version >= 2) {
      return absl::DataLossError(
          absl::StrFormat("%s: schema version %d without meta.rollup_bucket_ns", db.path(),
                          version));
    } else {
      bucket_ns = std::max<int64_t>(options.rollup_bucket_ns, 0);
    }
  }
  if (version < 2) {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare("INSERT INTO meta(key, value) VALUES('rollup_bucket_ns', ?1)"));
    st.BindInt(1, bucket_ns);
    RETURN_IF_ERROR(st.Run());
  }
  // Rollups stored by a v1 collector go into their buckets once, here.
  if (version == 1) RETURN_IF_ERROR(BuildBucketsFromRollups(db, bucket_ns).status());
  RETURN_IF_ERROR(
      db.Exec(absl::StrFormat("PRAGMA user_version=%d", SqliteStore::kSchemaVersion)));
  RETURN_IF_ERROR(tx.Commit());
  return bucket_ns;
}

}  // namespace opmap::collector
