// The engine's own figures that ingest_bench holds the ClickHouse store against:
//
//  - InsertBaseline: the rate at which `clickhouse-client` INSERTs the rows the collectors
//    stored (every table, RowBinary, through the same Distributed tables of a twin
//    database with the same schema), in the blocks the collectors wrote them in: one per
//    batch for `batches`, one per session for every per-session table (the bench's
//    sessions are alike, so that is rows / sessions), as many clients at once as the
//    collectors had streams. The rows are exported to files first; only the INSERTs are
//    timed. Bucket rows are merged by the time they are exported, so they are re-made per
//    session from the merged keys (first_session set per session, so no two blocks are
//    equal and block deduplication drops none).
//  - RawQuantiles: the latency-percentile query answered by ClickHouse itself from the
//    raw `events` rows (quantilesTDigest of kernel durations by layer type), timed over
//    HTTP as the collector's query is over gRPC.
#ifndef OPMAP_BENCH_CLICKHOUSE_BASELINE_H_
#define OPMAP_BENCH_CLICKHOUSE_BASELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/ingest_runner.h"

namespace opmap::bench {

struct BaselinePlan {
  const BenchCluster* cluster = nullptr;
  std::string source_db;   // what the collectors stored
  std::string target_db;   // an empty twin (same schema: ClickHouseStore::Open made it)
  int64_t sessions = 0;
  int agents = 16;         // session i belongs to bench-agent-<i % agents>
  int clients = 16;        // concurrent clickhouse-client processes
  std::string work_dir;    // where the exported rows go (removed by the caller)
};

struct BaselineResult {
  double seconds = 0;      // the INSERTs, wall
  int64_t rows = 0, blocks = 0;
  double bytes = 0;        // RowBinary, all tables
  std::vector<std::string> tables;  // "name: rows in blocks of N"
};

absl::StatusOr<BaselineResult> InsertBaseline(const BaselinePlan& plan);

// `runs` timed queries after two untimed ones; ms sorted, counted = kernels answered.
absl::StatusOr<QueryResult> RawQuantiles(const BenchCluster& cluster, const std::string& db,
                                         int runs);

}  // namespace opmap::bench

#endif  // OPMAP_BENCH_CLICKHOUSE_BASELINE_H_
