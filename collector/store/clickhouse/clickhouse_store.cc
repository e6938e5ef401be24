// ClickHouseStore: opening, the client pool, session state, raw payloads, retention and
// stats. Ingest is in clickhouse_group_commit.cc and clickhouse_rollup_insert.cc, the
// queries in clickhouse_query.cc and clickhouse_counters.cc.
#include "collector/store/clickhouse/clickhouse_store.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"

namespace opmap::collector {

using clickhouse_client::QuoteString;
using clickhouse_internal::RowBinaryReader;
using clickhouse_internal::RowBinaryWriter;

namespace clickhouse_internal {

Labels SortedLabels(const opmap::v1::Resource& resource) {
  std::vector<std::pair<std::string, std::string>> labels(resource.labels().begin(),
                                                          resource.labels().end());
  std::sort(labels.begin(), labels.end());
  Labels out;
  for (auto& [k, v] : labels) {
    out.keys.push_back(std::move(k));
    out.values.push_back(std::move(v));
  }
  return out;
}

std::string SessionKey(std::string_view agent, std::string_view session) {
  return absl::StrCat("agent = ", QuoteString(agent), " AND session = ", QuoteString(session));
}

uint32_t CaptureDay(int64_t window_start_ns, int64_t window_end_ns) {
  const int64_t ns = window_start_ns > 0 ? window_start_ns : std::max<int64_t>(window_end_ns, 0);
  const absl::CivilDay day =
      absl::ToCivilDay(absl::FromUnixNanos(ns), absl::UTCTimeZone());
  return static_cast<uint32_t>(day.year() * 10000 + day.month() * 100 + day.day());
}

int64_t HullStart(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace clickhouse_internal

using clickhouse_internal::CaptureDay;
using clickhouse_internal::HullStart;
using clickhouse_internal::SessionKey;
using clickhouse_internal::SortedLabels;

absl::StatusOr<std::unique_ptr<ClickHouseStore>> ClickHouseStore::Open(std::string_view url) {
  ASSIGN_OR_RETURN(clickhouse_client::ClickHouseUrl parsed,
                   clickhouse_client::ParseClickHouseUrl(url));
  std::string database = std::move(parsed.client.database);
  if (database.empty()) database = "default";
  // Every statement names its tables DB.table: the database may not exist yet when the
  // first one (CREATE DATABASE) runs, and `database=` on a missing one is an error.
  parsed.client.database.clear();
  // Acked only after every shard stored the block; reads go to the replica written to.
  parsed.client.settings["insert_distributed_sync"] = "1";
  parsed.client.settings["load_balancing"] = "in_order";
  // ClickHouse parses an INSERT's rows in blocks of max_insert_block_size (default
  // 1,048,576) and sizes each block's columns for that many rows: with group commit's
  // large INSERTs, 512 fleet windows in flight met the test cluster's 1 GB per-query limit
  // ("Memory limit (for query) exceeded", failing on 8 and 16 MiB allocations: 1,048,576
  // rows of 8 and 16 bytes) 7 times in 1,000 windows, each failed group sent again. A
  // quarter of it: no such failure, and 39 windows/s instead of 22 (docs/capacity.md). A
  // group over 262,144 rows of one table becomes a few parts instead of one.
  parsed.client.settings["max_insert_block_size"] = "262144";
  std::unique_ptr<ClickHouseStore> store(
      new ClickHouseStore(std::move(parsed.client), std::move(database), parsed.cluster,
                          parsed.rollup_bucket_ns >= 0 ? parsed.rollup_bucket_ns : kRollupBucketNs));
  if (absl::Status st = store->SetUpSchema(); !st.ok()) {
    return absl::Status(st.code(), absl::StrFormat("ClickHouse store %s: schema: %s",
                                                   store->database_, st.message()));
  }
  return store;
}

std::unique_ptr<clickhouse_client::HttpClient> ClickHouseStore::Acquire() {
  {
    absl::MutexLock lock(&pool_mu_);
    if (!pool_.empty()) {
      std::unique_ptr<clickhouse_client::HttpClient> c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  return std::make_unique<clickhouse_client::HttpClient>(options_);
}

void ClickHouseStore::Release(std::unique_ptr<clickhouse_client::HttpClient> client) {
  absl::MutexLock lock(&pool_mu_);
  pool_.push_back(std::move(client));
}

absl::StatusOr<std::string> ClickHouseStore::Query(std::string_view sql) {
  std::unique_ptr<clickhouse_client::HttpClient> client = Acquire();
  absl::StatusOr<std::string> body = client->Query(sql);
  Release(std::move(client));
  return body;
}

absl::StatusOr<std::string> ClickHouseStore::Execute(std::string_view sql) { return Query(sql); }

absl::Status ClickHouseStore::Insert(std::string_view table, std::string_view columns,
                                     std::string_view rows) {
  std::unique_ptr<clickhouse_client::HttpClient> client = Acquire();
  absl::Status st = client->Insert(
      absl::StrCat("INSERT INTO ", Table(table), " (", std::string(columns), ") FORMAT RowBinary"),
      rows);
  Release(std::move(client));
  return st;
}

absl::StatusOr<SessionState> ClickHouseStore::GetSession(std::string_view agent_id,
                                                         std::string_view session_id) {
  const std::string key = SessionKey(agent_id, session_id);
  // A complete session: its sessions row. Otherwise the highest stored seq, not counting
  // a last batch whose rollup is not stored (CommitBatch redoes it on the resend).
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat(
          "SELECT (SELECT count() FROM %1$s WHERE %3$s), "
          "(SELECT toUInt64(max(last_seq)) FROM %1$s WHERE %3$s), "
          "(SELECT toUInt32(argMax(string_count, last_seq)) FROM %1$s WHERE %3$s), "
          "(SELECT toUInt64(max(seq)) FROM %2$s WHERE %3$s AND last = 0), "
          "(SELECT toUInt32(argMax(string_count_after, seq)) FROM %2$s WHERE %3$s AND last = 0) "
          "FORMAT RowBinary",
          Table("sessions"), Table("batches"), key)));
  RowBinaryReader r(body);
  ASSIGN_OR_RETURN(const uint64_t complete, r.UInt64());
  ASSIGN_OR_RETURN(const uint64_t complete_seq, r.UInt64());
  ASSIGN_OR_RETURN(const uint32_t complete_strings, r.UInt32());
  ASSIGN_OR_RETURN(const uint64_t last_seq, r.UInt64());
  ASSIGN_OR_RETURN(const uint32_t strings, r.UInt32());
  SessionState state;
  state.complete = complete > 0;
  state.last_seq = state.complete ? complete_seq : last_seq;
  state.string_count = state.complete ? complete_strings : strings;
  return state;
}

absl::StatusOr<std::vector<std::string>> ClickHouseStore::LoadSessionPayloads(
    std::string_view agent_id, std::string_view session_id) {
  const std::string key = SessionKey(agent_id, session_id);
  // As GetSession counts: a last batch whose session is not complete is not loaded (the
  // ingest service appends its resend). LIMIT 1 BY: one row per seq whatever the engine.
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat("SELECT payload FROM %1$s WHERE %3$s AND (last = 0 OR "
                            "(SELECT count() FROM %2$s WHERE %3$s) > 0) "
                            "ORDER BY seq LIMIT 1 BY seq FORMAT RowBinary",
                            Table("batches"), Table("sessions"), key)));
  RowBinaryReader r(body);
  std::vector<std::string> payloads;
  while (!r.done()) {
    ASSIGN_OR_RETURN(std::string_view p, r.String());
    payloads.emplace_back(p);
  }
  return payloads;
}

absl::StatusOr<int64_t> ClickHouseStore::ExpireRawBefore(int64_t cutoff_ns) {
  // Whole capture days that ended at or before the cutoff.
  const uint32_t cutoff_day = CaptureDay(cutoff_ns, 0);
  const std::string complete = absl::StrFormat("(agent, session) %s (SELECT agent, session FROM %s)",
                                               In(), Table("sessions"));
  // Per day: its batches, and those of sessions still open (such a day is kept).
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat("SELECT day, count(), countIf(NOT (%s)) FROM %s WHERE day < %d "
                            "GROUP BY day ORDER BY day FORMAT RowBinary",
                            complete, Table("batches"), cutoff_day)));
  RowBinaryReader r(body);
  int64_t dropped = 0;
  while (!r.done()) {
    ASSIGN_OR_RETURN(const uint32_t day, r.UInt32());
    ASSIGN_OR_RETURN(const uint64_t batches, r.UInt64());
    ASSIGN_OR_RETURN(const uint64_t open, r.UInt64());
    if (open > 0) continue;
    RETURN_IF_ERROR(DropDay("batches", day));
    dropped += static_cast<int64_t>(batches);
  }
  // The events of those days: only complete sessions have any, so no day is kept.
  ASSIGN_OR_RETURN(const std::string days,
                   Query(absl::StrFormat("SELECT DISTINCT day FROM %s WHERE day < %d "
                                         "ORDER BY day FORMAT RowBinary",
                                         Table("events"), cutoff_day)));
  RowBinaryReader d(days);
  while (!d.done()) {
    ASSIGN_OR_RETURN(const uint32_t day, d.UInt32());
    RETURN_IF_ERROR(DropDay("events", day));
  }
  return dropped;
}

absl::Status ClickHouseStore::DropDay(std::string_view table, uint32_t day) {
  // Partitions live in the local tables; ON CLUSTER drops them on every replica.
  const std::string local =
      cluster_.empty() ? Table(table) : Table(absl::StrCat(std::string(table), "_local"));
  return Query(absl::StrFormat("ALTER TABLE %s%s DROP PARTITION %d", local, OnCluster(), day))
      .status();
}

StoreStats ClickHouseStore::Stats() {
  StoreStats stats;
  absl::StatusOr<std::string> body =
      Query(absl::StrFormat("SELECT (SELECT count() FROM %1$s), "
                            "(SELECT toInt64(sum(records)) FROM %1$s), "
                            "(SELECT uniqExact(agent, session) FROM %2$s) FORMAT RowBinary",
                            Table("batches"), Table("sessions")));
  // Stats has no error channel: a failing read reports zeros.
  if (!body.ok()) return stats;
  RowBinaryReader r(*body);
  absl::StatusOr<uint64_t> batches = r.UInt64();
  absl::StatusOr<int64_t> records = r.Int64();
  absl::StatusOr<uint64_t> complete = r.UInt64();
  if (!batches.ok() || !records.ok() || !complete.ok()) return stats;
  stats.batches = static_cast<int64_t>(*batches);
  stats.records = *records;
  stats.sessions_complete = static_cast<int64_t>(*complete);
  return stats;
}

}  // namespace opmap::collector
