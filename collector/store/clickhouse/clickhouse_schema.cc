// ClickHouseStore's schema: the tables (clickhouse_store.h), created idempotently at open.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_store.h"

namespace opmap::collector {
namespace {

struct TableDef {
  const char* name;
  const char* columns;
  const char* order_by;
  const char* partition_by;  // "" for none
  const char* shard_key;     // of the Distributed table
  bool replacing;            // a row per key: duplicates collapse in merges
};

// Column order here is the order inserts list them in (clickhouse_store.cc); the types
// are what RowBinary writes.
const TableDef kTables[] = {
    {"opmap_meta", "key String, value Int64", "key", "", "cityHash64(key)", true},
    {"batches",
     "agent String, session String, seq UInt64, last UInt8, day UInt32, window_start_ns Int64, "
     "window_end_ns Int64, records Int64, string_count_after UInt32, host String, model String, "
     "revision String, label_keys Array(String), label_values Array(String), payload String",
     "(agent, session, seq)", "day", "cityHash64(agent)", false},
    {"rollups",
     "agent String, session String, subject UInt8, ordinal UInt32, layer_type String, "
     "operator String, kernel String, module String, module_type String, host String, "
     "revision String, count Int64, sum_ns Int64, min_ns Int64, max_ns Int64, "
     "sketch_scale Int32, sketch_offset Int32, sketch_zero UInt64, sketch_count UInt64, "
     "sketch_sum Float64, sketch_min Float64, sketch_max Float64, sketch_bins Array(UInt64)",
     "(subject, agent, session, ordinal)", "", "cityHash64(agent)", false},
    {"device_times",
     "agent String, session String, host String, device Int64, gpu_uuid String, "
     "gpu_name String, span_ns Int64, busy_ns Int64, idle_ns Int64, compute_ns Int64, "
     "non_compute_ns Int64, event_count Int64",
     "(agent, session, device)", "", "cityHash64(agent)", false},
    {"session_counters",
     "agent String, session String, name String, source Int32, pid Int64, samples Int64, "
     "value Int64, time_enabled_ns Int64, time_running_ns Int64",
     "(agent, session, name, source, pid)", "", "cityHash64(agent)", false},
    {"session_drops",
     "agent String, session String, stage Int32, kind Int32, reason String, count Int64",
     "(agent, session, stage, kind, reason)", "", "cityHash64(agent)", false},
    {"session_unavailable",
     "agent String, session String, ordinal UInt32, what String, reason String",
     "(agent, session, ordinal)", "", "cityHash64(agent)", false},
    {"sessions",
     "agent String, session String, last_seq UInt64, string_count UInt32, host String, "
     "model String, revision String, label_keys Array(String), label_values Array(String), "
     "window_start_ns Int64, window_end_ns Int64, gpu_event_count Int64, gpu_time_ns Int64, "
     "rule_graph_node Int64, rule_external_id Int64, rule_launch_nesting Int64, "
     "rule_graph_launch Int64, rule_unmapped Int64",
     "(agent, session)", "", "cityHash64(agent)", true},
    {"signoffs",
     "report_sha256 String, kind String, baseline String, candidate String, verdict String, "
     "owner String, role String, signed_ns Int64, principal String",
     "(kind, baseline, candidate, report_sha256, owner, role)", "",
     "cityHash64(report_sha256)", false},
};

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
  {
    absl::StatusOr<std::string> current =
        Query(absl::StrCat("SELECT max(value) FROM ", Table("opmap_meta"),
                           " WHERE key = 'schema_version' FORMAT TSV"));
    int64_t v = 0;
    if (current.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*current), &v) &&
        v == kSchemaVersion) {
      return absl::OkStatus();
    }
  }
  RETURN_IF_ERROR(
      Query(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", database_, OnCluster())).status());
  // Each table, and with a cluster its replicated local table first. Every statement is
  // IF NOT EXISTS: two collectors opening a new database at once both succeed.
  auto create = [&](const TableDef& t) -> absl::Status {
    const std::string partition =
        *t.partition_by == '\0' ? "" : absl::StrCat(" PARTITION BY ", t.partition_by);
    const char* engine = t.replacing ? "ReplacingMergeTree" : "MergeTree";
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
  ASSIGN_OR_RETURN(std::string version_text,
                   Query(absl::StrCat("SELECT max(value) FROM ", Table("opmap_meta"),
                                      " WHERE key = 'schema_version' FORMAT TSV")));
  int64_t version = 0;
  absl::StripAsciiWhitespace(&version_text);
  if (!version_text.empty() && !absl::SimpleAtoi(version_text, &version)) {
    return absl::DataLossError(absl::StrFormat(
        "ClickHouse store %s: opmap_meta.schema_version is \"%s\"", database_, version_text));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "ClickHouse store %s: schema version %d is newer than this collector supports (%d)",
        database_, version, kSchemaVersion));
  }
  if (version == kSchemaVersion) return absl::OkStatus();  // made by an earlier open
  for (size_t i = 1; i < sizeof(kTables) / sizeof(kTables[0]); ++i) {
    RETURN_IF_ERROR(create(kTables[i]));
  }
  // Written last: a version row means every table exists. The same bytes from every
  // collector that creates the schema: deduplicated (and collapsed by ReplacingMergeTree).
  return Query(absl::StrFormat("INSERT INTO %s (key, value) VALUES ('schema_version', %d)",
                               Table("opmap_meta"), kSchemaVersion))
      .status();
}

}  // namespace opmap::collector
