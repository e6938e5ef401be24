// ingest_bench's settings and their flags, through the flag table every opmap binary
// uses (common/config/flag_config.h): errors name the flag and the value, --help lists
// every flag.
#ifndef OPMAP_BENCH_INGEST_BENCH_FLAGS_H_
#define OPMAP_BENCH_INGEST_BENCH_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::bench {

struct Options {
  bool sqlite = true, clickhouse = false;
  int64_t kernels = 10'000'000;
  int64_t ch_kernels = 0;            // 0: --kernels
  int64_t session_kernels = 10'000;
  int64_t batch_records = 20'000;
  int64_t agents = 16;
  int64_t streams = 2;
  int64_t ch_streams = 16;
  int64_t collectors = 2;
  int64_t window = 64;
  int64_t query_runs = 100;
  bool query_range_cut = false;
  int64_t baseline_clients = -1;     // -1: --ch-streams
  int64_t scale_kernels = 100'000;
  int64_t sessions_factor = 100;
  std::string cluster_script;        // default: the source tree's
  std::string dir;
  std::vector<std::string> collector_flags;  // passed to every collector started
  int64_t fleet = 0;                 // agent ids of the fleet simulation; 0: none
  int64_t fleet_windows = 5'000;     // windows into SQLite
  int64_t ch_fleet_windows = 500;    // windows into ClickHouse
  int64_t fleet_streams = 32;        // windows in flight at once
};

// The options, or nullopt for --help; InvalidArgument naming the flag and its value.
absl::StatusOr<std::optional<Options>> ParseIngestBenchArgs(const std::vector<std::string>& args);
std::string IngestBenchUsage();

}  // namespace opmap::bench

#endif  // OPMAP_BENCH_INGEST_BENCH_FLAGS_H_
