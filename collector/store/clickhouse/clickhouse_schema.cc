// ClickHouseStore's schema: the tables (clickhouse_store.h), created idempotently at open.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"

namespace opmap::collector {
namespace {

struct TableDef {
  const char* name;
  const char* columns;
  const char* order_by;
  const char* partition_by;  // "" for none
  const char* shard_key;     // of the Distributed table
  // MergeTree; ReplacingMergeTree (a row per key: duplicates collapse in merges);
  // AggregatingMergeTree (rows of a key merge their aggregate states).
  const char* engine;
};

#define OPMAP_CH_BUCKET_COLUMNS                                                                    \
  "subject UInt8, bucket_ns Int64, model String, revision String, host String, "            \
  "label_keys Array(String), label_values Array(String), layer_type String, "               \
  "operator String, kernel String, module String, module_type String, "                     \
  "sessions AggregateFunction(sum, UInt64), count AggregateFunction(sum, Int64), "          \
  "sum_ns AggregateFunction(sum, Int64), min_ns AggregateFunction(min, Int64), "            \
  "max_ns AggregateFunction(max, Int64), sketch_scale_min AggregateFunction(min, Int32), "  \
  "sketch_scale_max AggregateFunction(max, Int32), "                                        \
  "sketch_bins AggregateFunction(sumMap, Array(Int64), Array(UInt64)), "                    \
  "sketch_zero AggregateFunction(sum, UInt64), sketch_sum AggregateFunction(sum, Float64), " \
  "sketch_min AggregateFunction(min, Float64), sketch_max AggregateFunction(max, Float64), " \
  "first_session String"
#define OPMAP_CH_BUCKET_KEY                                                                       \
  "(subject, bucket_ns, model, revision, host, label_keys, label_values, layer_type, "   \
  "operator, kernel, module, module_type"

// Column order here is the order inserts list them in (clickhouse_store.cc); the types
// are what RowBinary writes.
const TableDef kTables[] = {
    {"opmap_meta", "key String, value Int64", "key", "", "cityHash64(key)", "ReplacingMergeTree"},
    {"batches",
     "agent String, session String, seq UInt64, last UInt8, day UInt32, window_start_ns Int64, "
     "window_end_ns Int64, records Int64, string_count_after UInt32, host String, model String, "
     "revision String, label_keys Array(String), label_values Array(String), payload String",
     "(agent, session, seq)", "day", "cityHash64(agent)", "MergeTree"},
    {"rollups",
     "agent String, session String, subject UInt8, ordinal UInt32, layer_type String, "
     "operator String, kernel String, module String, module_type String, host String, "
     "revision String, count Int64, sum_ns Int64, min_ns Int64, max_ns Int64, "
     "sketch_scale Int32, sketch_offset Int32, sketch_zero UInt64, sketch_count UInt64, "
     "sketch_sum Float64, sketch_min Float64, sketch_max Float64, sketch_bins Array(UInt64), "
     "flush UInt64",
     "(subject, agent, session, ordinal)", "", "cityHash64(agent)", "MergeTree"},
    {"device_times",
     "agent String, session String, host String, device Int64, gpu_uuid String, "
     "gpu_name String, span_ns Int64, busy_ns Int64, idle_ns Int64, compute_ns Int64, "
     "non_compute_ns Int64, event_count Int64, flush UInt64",
     "(agent, session, device)", "", "cityHash64(agent)", "MergeTree"},
    {"session_counters",
     "agent String, session String, name String, source Int32, pid Int64, samples Int64, "
     "value Int64, time_enabled_ns Int64, time_running_ns Int64, flush UInt64",
     "(agent, session, name, source, pid)", "", "cityHash64(agent)", "MergeTree"},
    {"session_drops",
     "agent String, session String, stage Int32, kind Int32, reason String, count Int64, "
     "flush UInt64",
     "(agent, session, stage, kind, reason)", "", "cityHash64(agent)", "MergeTree"},
    // Power rows (SessionTelemetry.power). A figure the agent could not read is -1: these
    // columns are never negative when read (clickhouse_power.cc).
    {"session_power",
     "agent String, session String, domain Int32, device String, name String, "
     "gpu_index UInt32, start_ns Int64, end_ns Int64, covered_ns Int64, energy_mj Int64, "
     "method Int32, reads UInt32, power_limit_mw Int64, sm_clock_mhz Int64, "
     "memory_clock_mhz Int64, throttle_reasons Int64, temperature_c Int64, persistence Int64, "
     "mig Int64, compute_mode Int64, flush UInt64",
     "(agent, session, domain, device)", "", "cityHash64(agent)", "MergeTree"},
    {"session_unavailable",
     "agent String, session String, ordinal UInt32, what String, reason String, flush UInt64",
     "(agent, session, ordinal)", "", "cityHash64(agent)", "MergeTree"},
    {"sessions",
     "agent String, session String, last_seq UInt64, string_count UInt32, host String, "
     "model String, revision String, label_keys Array(String), label_values Array(String), "
     "window_start_ns Int64, window_end_ns Int64, gpu_event_count Int64, gpu_time_ns Int64, "
     "rule_graph_node Int64, rule_external_id Int64, rule_launch_nesting Int64, "
     "rule_graph_launch Int64, rule_unmapped Int64, bucketed UInt8, bucket_ns Int64, "
     "flush UInt64, flush_sessions UInt32",
     // By flush too (v3): two flushes' copies of a session are two rows that merges keep
     // (a database migrated from v2 keeps (agent, session): merges may leave one copy).
     "(agent, session, flush)", "", "cityHash64(agent)", "ReplacingMergeTree"},
    // v2. Pre-merged rollups (clickhouse_buckets.cc) of schema v2's sessions (flush 0):
    // per bucket and key, the merged rows of every session bucketed there, as aggregate
    // states. Sharded by the bucket, so a bucket's rows are merged on one shard.
    {"rollup_buckets", OPMAP_CH_BUCKET_COLUMNS, OPMAP_CH_BUCKET_KEY ")", "", "cityHash64(bucket_ns)",
     "AggregatingMergeTree"},
    // v3. The same per flush: rows merge only with rows of the same flush, so a query can
    // leave out a flush whose sessions did not all count (clickhouse_store.h).
    {"flush_buckets", OPMAP_CH_BUCKET_COLUMNS ", flush UInt64", OPMAP_CH_BUCKET_KEY ", flush)", "",
     "cityHash64(bucket_ns)", "AggregatingMergeTree"},
    // v2. Mapped events, one row each (clickhouse_events.cc, analysis/summary/event_rows.h).
    {"events",
     "day UInt32, agent String, session String, host String, model String, revision String, "
     "label_keys Array(String), label_values Array(String), "
     "kind Enum8('kernel' = 0, 'memcpy' = 1, 'memset' = 2, 'range' = 3, 'launch' = 4), "
     "start_ns Int64, end_ns Int64, duration_ns Int64, name String, operator String, "
     "layer_type String, module String, rule String, device Int32, stream Int64, "
     "correlation Int64, grid_x Int32, grid_y Int32, grid_z Int32, block_x Int32, "
     "block_y Int32, block_z Int32, request UInt32, flush UInt64",
     "(model, revision, kind, agent, session, start_ns)", "day", "cityHash64(agent)",
     "MergeTree"},
    {"signoffs",
     "report_sha256 String, kind String, baseline String, candidate String, verdict String, "
     "owner String, role String, signed_ns Int64, principal String",
     "(kind, baseline, candidate, report_sha256, owner, role)", "",
     "cityHash64(report_sha256)", "MergeTree"},
};

#undef OPMAP_CH_BUCKET_COLUMNS
#undef OPMAP_CH_BUCKET_KEY

// The per-session tables that gained `flush` in v3 (sessions also gained flush_sessions).
const char* const kFlushTables[] = {"rollups",       "device_times", "session_counters",
                                    "session_drops", "session_power", "session_unavailable",
                                    "events"};

}  // namespace

std::string ClickHouseStore::Table(std::string_view name) const {
  return absl::StrCat(database_, ".", std::string(name));
}

std::string ClickHouseStore::OnCluster() const {
  return cluster_.empty() ? "" : absl::StrCat(" ON CLUSTER ", cluster_);
}

absl::Status ClickHouseStore::SetUpSchema() {
  // An existing schema at this version needs no DDL. Checked first because ON CLUSTER
  // statements wait for every server: a collector (re)started while one ClickHouse
  // replica is down must still come up and serve from the others.
  if (absl::StatusOr<Meta> meta = ReadMeta(); meta.ok() && meta->version == kSchemaVersion) {
    bucket_ns_ = meta->bucket_ns;
    return ReadHasV2Buckets();
  }
  RETURN_IF_ERROR(
      Query(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", database_, OnCluster())).status());
  // Each table, and with a cluster its replicated local table first. Every statement is
  // IF NOT EXISTS: two collectors opening a new database at once both succeed.
  auto create = [&](const TableDef& t) -> absl::Status {
    const std::string partition =
        *t.partition_by == '\0' ? "" : absl::StrCat(" PARTITION BY ", t.partition_by);
    const char* engine = t.engine;
    if (cluster_.empty()) {
      return Query(absl::StrFormat("CREATE TABLE IF NOT EXISTS %s (%s) ENGINE = %s()%s ORDER BY %s",
                                   Table(t.name), t.columns, engine, partition, t.order_by))
          .status();
    }
    const std::string local = absl::StrCat(t.name, "_local");
    RETURN_IF_ERROR(
        Query(absl::StrFormat(
                  "CREATE TABLE IF NOT EXISTS %s%s (%s) ENGINE = Replicated%s("
                  "'/clickhouse/tables/{shard}/%s/%s', '{replica}')%s ORDER BY %s",
                  Table(local), OnCluster(), t.columns, engine, database_, local, partition,
                  t.order_by))
            .status());
    return Query(absl::StrFormat(
                     "CREATE TABLE IF NOT EXISTS %s%s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
                     Table(t.name), OnCluster(), Table(local), cluster_, database_, local,
                     t.shard_key))
        .status();
  };
  RETURN_IF_ERROR(create(kTables[0]));
  ASSIGN_OR_RETURN(const Meta meta, ReadMeta());
  if (meta.version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "ClickHouse store %s: schema version %d is newer than this collector supports (%d)",
        database_, meta.version, kSchemaVersion));
  }
  if (meta.version == kSchemaVersion) {  // made by an earlier open
    bucket_ns_ = meta.bucket_ns;
    return ReadHasV2Buckets();
  }
  if (meta.version == 1) {
    // v1 → v2: sessions gains the bucket columns (its sessions stay unbucketed and are
    // read per session, as v1 read them); the new tables are created below.
    RETURN_IF_ERROR(AddColumns("sessions", "bucket_ns",
                               "ADD COLUMN bucketed UInt8, ADD COLUMN bucket_ns Int64"));
  }
  if (meta.version >= 1 && meta.version <= 2) {
    // v2 → v3: every row of a complete session carries its flush; the rows stored before
    // are flush 0, as a v3 session committed alone is (clickhouse_store.h).
    RETURN_IF_ERROR(AddColumns("sessions", "flush",
                               "ADD COLUMN flush UInt64, ADD COLUMN flush_sessions UInt32"));
    for (const char* table : kFlushTables) {
      RETURN_IF_ERROR(AddColumns(table, "flush", "ADD COLUMN flush UInt64"));
    }
  }
  for (size_t i = 1; i < sizeof(kTables) / sizeof(kTables[0]); ++i) {
    RETURN_IF_ERROR(create(kTables[i]));
  }
  // The bucket width, fixed for the database's life (a session's bucket is chosen when it
  // completes). Then the version, last: a version row means every table exists. The same
  // bytes from every collector that creates the schema: deduplicated (and collapsed by
  // ReplacingMergeTree).
  RETURN_IF_ERROR(Query(absl::StrFormat(
                            "INSERT INTO %s (key, value) VALUES ('rollup_bucket_ns', %d)",
                            Table("opmap_meta"), new_bucket_ns_))
                      .status());
  RETURN_IF_ERROR(Query(absl::StrFormat("INSERT INTO %s (key, value) VALUES ('schema_version', %d)",
                                        Table("opmap_meta"), kSchemaVersion))
                      .status());
  // Read back: a collector creating the schema at the same time with another width wrote
  // its row too, and every collector must bucket with the one that stays (the largest).
  ASSIGN_OR_RETURN(const Meta written, ReadMeta());
  bucket_ns_ = written.bucket_ns;
  return ReadHasV2Buckets();
}

absl::Status ClickHouseStore::ReadHasV2Buckets() {
  // Only a database migrated from v2 has any; none are written since.
  ASSIGN_OR_RETURN(const std::string n,
                   Query(absl::StrFormat("SELECT count() FROM (SELECT 1 FROM %s LIMIT 1) "
                                         "FORMAT TSV",
                                         Table("rollup_buckets"))));
  has_v2_buckets_ = absl::StripAsciiWhitespace(n) != "0";
  return absl::OkStatus();
}

absl::StatusOr<ClickHouseStore::Meta> ClickHouseStore::ReadMeta() {
  ASSIGN_OR_RETURN(const std::string body,
                   Query(absl::StrFormat("SELECT toInt64(maxIf(value, key = 'schema_version')), "
                                         "toInt64(maxIf(value, key = 'rollup_bucket_ns')) FROM %s "
                                         "FORMAT RowBinary",
                                         Table("opmap_meta"))));
  clickhouse_internal::RowBinaryReader r(body);
  Meta meta;
  ASSIGN_OR_RETURN(meta.version, r.Int64());
  ASSIGN_OR_RETURN(meta.bucket_ns, r.Int64());
  if (meta.version < 0 || meta.bucket_ns < 0) {
    return absl::DataLossError(absl::StrFormat(
        "ClickHouse store %s: opmap_meta holds schema_version %d, rollup_bucket_ns %d",
        database_, meta.version, meta.bucket_ns));
  }
  return meta;
}

absl::Status ClickHouseStore::AddColumns(std::string_view table, std::string_view probe,
                                         std::string_view add) {
  // 18.16 has no ADD COLUMN IF NOT EXISTS: look first; a collector migrating at the same
  // time may win the race, so a failed ALTER is fine when the column is there after it.
  auto has_column = [&](const std::string& name) -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(const std::string n,
                     Query(absl::StrFormat("SELECT count() FROM system.columns WHERE database "
                                           "= '%s' AND table = '%s' AND name = '%s' "
                                           "FORMAT TSV",
                                           database_, name, probe)));
    return absl::StripAsciiWhitespace(n) != "0";
  };
  const std::string local =
      cluster_.empty() ? std::string(table) : absl::StrCat(std::string(table), "_local");
  // A table newer than the database's version is created with the column.
  ASSIGN_OR_RETURN(const std::string exists,
                   Query(absl::StrFormat("SELECT count() FROM system.tables WHERE database = "
                                         "'%s' AND name = '%s' FORMAT TSV",
                                         database_, local)));
  if (absl::StripAsciiWhitespace(exists) == "0") return absl::OkStatus();
  ASSIGN_OR_RETURN(const bool present, has_column(local));
  if (!present) {
    absl::Status st =
        Query(absl::StrFormat("ALTER TABLE %s%s %s", Table(local), OnCluster(), add)).status();
    if (!st.ok()) {
      ASSIGN_OR_RETURN(const bool now, has_column(local));
      if (!now) return st;
    }
  }
  if (cluster_.empty()) return absl::OkStatus();
  // 18.16 refuses ALTER ... ON CLUSTER of a Distributed table over replicated shards
  // (code 371), so the Distributed table is dropped and SetUpSchema creates it again
  // with the local table's new columns. Queries on it fail for that moment.
  ASSIGN_OR_RETURN(const bool distributed, has_column(std::string(table)));
  if (distributed) return absl::OkStatus();
  return Query(absl::StrFormat("DROP TABLE IF EXISTS %s%s", Table(table), OnCluster())).status();
}

}  // namespace opmap::collector
