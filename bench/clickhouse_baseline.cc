#include "bench/clickhouse_baseline.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "collector/clickhouse_client/http_client.h"
#include "tests/integration/collector_fixture.h"

namespace opmap::bench {
namespace {

absl::StatusOr<std::vector<std::string>> Lines(const BenchCluster& c, const std::string& sql) {
  absl::StatusOr<std::string> body = c.Query(sql + " FORMAT TSV");
  if (!body.ok()) return body.status();
  return std::vector<std::string>(
      absl::StrSplit(absl::StripAsciiWhitespace(*body), '\n', absl::SkipEmpty()));
}

absl::StatusOr<int64_t> Count(const BenchCluster& c, const std::string& sql) {
  absl::StatusOr<std::vector<std::string>> lines = Lines(c, sql);
  if (!lines.ok()) return lines.status();
  int64_t n = 0;
  if (lines->size() != 1 || !absl::SimpleAtoi((*lines)[0], &n)) {
    return absl::InternalError(absl::StrCat("not a count: ", sql));
  }
  return n;
}

std::string Quoted(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const std::string& n : names) q.push_back(opmap::collector::clickhouse_client::QuoteString(n));
  return absl::StrJoin(q, ", ");
}

// One table to copy: its rows, the collectors' block size, and per client slot the
// SELECT that exports that slot's rows.
struct TableCopy {
  std::string name;
  int64_t rows = 0;
  int64_t block_rows = 0;
  std::vector<std::string> export_sql;
};

}  // namespace

absl::StatusOr<BaselineResult> InsertBaseline(const BaselinePlan& plan) {
  const BenchCluster& c = *plan.cluster;
  const std::string& src = plan.source_db;
  // The first server, as the collectors' in-order endpoint list picks it.
  const std::vector<std::string> ports = absl::StrSplit(c.Env("CH_TCP_PORTS"), ',');
  const std::string client =
      absl::StrCat("clickhouse-client --host 127.0.0.1 --port ", ports.front());
  // Client slots: each takes the sessions of some agents (the tables are sharded by agent).
  const int slots = std::max(1, std::min(plan.clients, plan.agents));
  std::vector<std::vector<std::string>> slot_agents(slots);
  for (int a = 0; a < plan.agents; ++a) {
    slot_agents[a % slots].push_back(absl::StrCat("bench-agent-", a));
  }
  absl::StatusOr<std::vector<std::string>> tables = Lines(
      c, absl::StrCat("SELECT name FROM system.tables WHERE database = '", src,
                      "' AND engine = 'Distributed' ORDER BY name"));
  if (!tables.ok()) return tables.status();
  std::vector<TableCopy> copies;
  for (const std::string& t : *tables) {
    if (t == "opmap_meta" || t == "signoffs") continue;
    TableCopy copy;
    copy.name = t;
    if (t == "rollup_buckets") {
      // The merged keys, once per session of the slot.
      absl::StatusOr<int64_t> keys =
          Count(c, absl::StrCat("SELECT count() FROM (SELECT 1 FROM ", src,
                                ".rollup_buckets FINAL)"));
      if (!keys.ok()) return keys.status();
      absl::StatusOr<std::vector<std::string>> cols = Lines(
          c, absl::StrCat("SELECT name FROM system.columns WHERE database = '", src,
                          "' AND table = 'rollup_buckets'"));
      if (!cols.ok()) return cols.status();
      copy.block_rows = *keys;
      for (int s = 0; s < slots; ++s) {
        absl::StatusOr<int64_t> n = Count(
            c, absl::StrCat("SELECT count() FROM ", src, ".sessions WHERE agent IN (",
                            Quoted(slot_agents[s]), ")"));
        if (!n.ok()) return n.status();
        std::vector<std::string> select;
        for (const std::string& col : *cols) {
          select.push_back(col == "first_session"
                               ? absl::StrFormat("concat(first_session, '#%d.', toString(s))", s)
                               : col);
        }
        copy.export_sql.push_back(absl::StrFormat(
            "SELECT %s FROM (SELECT * FROM %s.rollup_buckets FINAL) ARRAY JOIN range(%d) AS s "
            "ORDER BY s",
            absl::StrJoin(select, ", "), src, *n));
        copy.rows += *keys * *n;
      }
    } else {
      absl::StatusOr<int64_t> rows = Count(c, absl::StrCat("SELECT count() FROM ", src, ".", t));
      if (!rows.ok()) return rows.status();
      if (*rows == 0) continue;
      copy.rows = *rows;
      copy.block_rows = t == "batches" ? 1 : *rows / plan.sessions;
      if (t != "batches" && *rows % plan.sessions != 0) {
        return absl::InternalError(absl::StrFormat(
            "%s: %d rows over %d sessions: not one block per session", t, *rows, plan.sessions));
      }
      for (int s = 0; s < slots; ++s) {
        copy.export_sql.push_back(
            absl::StrFormat("SELECT * FROM %s.%s WHERE agent IN (%s) ORDER BY agent, session%s",
                            src, t, Quoted(slot_agents[s]), t == "batches" ? ", seq" : ""));
      }
    }
    copies.push_back(std::move(copy));
  }

  // Export (untimed), then one shell loop per slot, all at once.
  BaselineResult result;
  std::string script = "set -e\npids=()\n";
  for (int s = 0; s < slots; ++s) {
    std::string loop;
    for (const TableCopy& t : copies) {
      const std::string file = absl::StrFormat("%s/%s.%d.bin", plan.work_dir, t.name, s);
      opmap::testing::RunResult r = opmap::testing::Run(
          {"/bin/bash", "-c",
           absl::StrFormat("%s --query \"%s FORMAT RowBinary\" > %s", client, t.export_sql[s],
                           file)},
          plan.work_dir, {}, absl::Seconds(600));
      if (r.exit_code != 0) {
        return absl::InternalError(absl::StrCat("exporting ", t.name, ": exit ", r.exit_code, ": ", r.err));
      }
      std::error_code ec;
      result.bytes += static_cast<double>(std::filesystem::file_size(file, ec));
      absl::StrAppendFormat(
          &loop,
          "  %s --insert_distributed_sync=1 --min_insert_block_size_rows=0 "
          "--min_insert_block_size_bytes=0 --max_insert_block_size=%d "
          "--query 'INSERT INTO %s.%s FORMAT RowBinary' < %s\n",
          client, std::max<int64_t>(1, t.block_rows), plan.target_db, t.name, file);
    }
    absl::StrAppend(&script, "(\n", loop, ") &\npids+=($!)\n");
  }
  absl::StrAppend(&script, "for p in \"${pids[@]}\"; do wait \"$p\"; done\n");
  const std::string script_path = plan.work_dir + "/insert.sh";
  std::ofstream(script_path) << script;
  const absl::Time t0 = absl::Now();
  opmap::testing::RunResult r =
      opmap::testing::Run({"/bin/bash", script_path}, plan.work_dir, {}, absl::Seconds(3600));
  result.seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  if (r.exit_code != 0) return absl::InternalError(absl::StrCat("clickhouse-client: exit ", r.exit_code, ": ", r.err));
  for (const TableCopy& t : copies) {
    result.rows += t.rows;
    result.blocks += t.rows / std::max<int64_t>(1, t.block_rows);
    result.tables.push_back(absl::StrFormat("%s %d rows in blocks of %d", t.name, t.rows,
                                            t.block_rows));
  }
  // Every row landed (a deduplicated block would show here).
  for (const TableCopy& t : copies) {
    if (t.name == "rollup_buckets") continue;
    absl::StatusOr<int64_t> n =
        Count(c, absl::StrCat("SELECT count() FROM ", plan.target_db, ".", t.name));
    if (!n.ok()) return n.status();
    if (*n != t.rows) {
      return absl::InternalError(absl::StrFormat("baseline %s: %d rows stored of %d", t.name,
                                                 *n, t.rows));
    }
  }
  return result;
}

absl::StatusOr<QueryResult> RawQuantiles(const BenchCluster& cluster, const std::string& db,
                                         int runs) {
  const std::string sql = absl::StrCat(
      "SELECT layer_type, quantilesTDigest(0.5, 0.95, 0.99)(duration_ns), count() FROM ", db,
      ".events WHERE kind = 'kernel' GROUP BY layer_type");
  QueryResult result;
  for (int i = -2; i < runs; ++i) {
    const absl::Time t0 = absl::Now();
    absl::StatusOr<std::vector<std::string>> lines = Lines(cluster, sql);
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
    if (!lines.ok()) return lines.status();
    if (i < 0) {
      result.counted = 0;
      result.groups = lines->size();
      for (const std::string& line : *lines) {
        uint64_t n = 0;
        const size_t tab = line.rfind('\t');
        if (tab != std::string::npos && absl::SimpleAtoi(line.substr(tab + 1), &n)) {
          result.counted += n;
        }
      }
      continue;
    }
    result.ms.push_back(ms);
  }
  std::sort(result.ms.begin(), result.ms.end());
  return result;
}

}  // namespace opmap::bench
