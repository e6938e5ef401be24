#include "bench/ingest_bench_flags.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/config/flag_config.h"

namespace opmap::bench {
namespace {

using Key = config::ConfigKey<Options>;

auto Positive(int64_t Options::*field) { return config::ParsedSetter(field, &config::ParsePositive); }

// A count that may be 0 ("none").
auto Count(int64_t Options::*field) { return config::ParsedSetter(field, &config::ParseCount); }

const std::vector<Key>& Keys() {
  static const std::vector<Key>* keys = new std::vector<Key>{
      {"engines", false, "LIST", "sqlite, clickhouse or both, comma-separated (default sqlite)",
       [](std::string_view v, Options* o) -> absl::Status {
         o->sqlite = o->clickhouse = false;
         for (const std::string& e : config::SplitCommaList(v)) {
           if (e == "sqlite") {
             o->sqlite = true;
           } else if (e == "clickhouse") {
             o->clickhouse = true;
           } else {
             return absl::InvalidArgumentError(
                 absl::StrCat("'", e, "' is not sqlite or clickhouse"));
           }
         }
         return absl::OkStatus();
       }},
      {"kernels", false, "N", "kernel records to ingest in all, per engine (default 10000000)",
       Positive(&Options::kernels)},
      {"ch-kernels", false, "N", "the same for ClickHouse only (default: --kernels)",
       Positive(&Options::ch_kernels)},
      {"session-kernels", false, "N", "kernels per synthetic session (default 10000)",
       Positive(&Options::session_kernels)},
      {"batch-records", false, "N", "records per batch (default 20000)",
       Positive(&Options::batch_records)},
      {"agents", false, "N", "distinct agent ids the sessions are spread over (default 16)",
       Positive(&Options::agents)},
      {"streams", false, "N", "concurrent Ingest streams into SQLite (default 2)",
       Positive(&Options::streams)},
      {"ch-streams", false, "N", "concurrent Ingest streams into the ClickHouse collectors (default 16)",
       Positive(&Options::ch_streams)},
      {"collectors", false, "N", "collector processes in front of ClickHouse (default 2)",
       Positive(&Options::collectors)},
      {"window", false, "N", "unacknowledged batches per stream (default 64)",
       Positive(&Options::window)},
      {"query-runs", false, "N", "latency queries to time (default 100)",
       Positive(&Options::query_runs)},
      {"baseline-clients", false, "N",
       "clickhouse-client processes at once for the engine baseline (default: --ch-streams; "
       "0: no baseline)",
       Count(&Options::baseline_clients)},
      {"scale-kernels", false, "N",
       "kernels for the sessions-scaling pair (default 100000; 0: none): stored once in "
       "sessions of --session-kernels and once in --sessions-factor times as many sessions",
       Count(&Options::scale_kernels)},
      {"sessions-factor", false, "F", "(default 100)", Positive(&Options::sessions_factor)},
      {"query-range-cut", true, "",
       "query [first session start, +1 h) instead of all time: a range that cuts through the "
       "rollup bucket holding every session (the per-session path)",
       config::ParsedSetter(&Options::query_range_cut, &config::ParseBool)},
      {"collector-bin", false, "PATH", "the opmap-collector binary (default: OPMAP_BIN_DIR)",
       [](std::string_view v, Options*) -> absl::Status {
         setenv("OPMAP_BIN_DIR", std::filesystem::path(std::string(v)).parent_path().c_str(), 1);
         return absl::OkStatus();
       }},
      {"cluster-script", false, "PATH",
       "scripts/clickhouse_cluster.sh (default: the source tree's)",
       config::StringSetter(&Options::cluster_script)},
      {"dir", false, "DIR", "where the SQLite file goes (default: a fresh temp dir, removed)",
       config::StringSetter(&Options::dir)},
      {"fleet", false, "N",
       "instead of the above: the fleet simulation, N agent ids (e.g. 10000) sending windows "
       "of 100 / 1,000 / 10,000 / 100,000 kernels (55 / 30 / 13 / 2 %), each its own Ingest "
       "stream, time-compressed (docs/capacity.md)",
       Positive(&Options::fleet)},
      {"fleet-windows", false, "N", "windows into SQLite (default 5000)",
       Positive(&Options::fleet_windows)},
      {"ch-fleet-windows", false, "N", "windows into ClickHouse (default 500)",
       Positive(&Options::ch_fleet_windows)},
      {"fleet-streams", false, "N", "windows in flight at once (default 32)",
       Positive(&Options::fleet_streams)},
      {"collector-flag", false, "ARG",
       "one more argument for every collector started (repeatable), e.g. --collector-flag "
       "--group-commit-max-batches --collector-flag 1",
       [](std::string_view v, Options* o) -> absl::Status {
         o->collector_flags.emplace_back(v);
         return absl::OkStatus();
       }},
  };
  return *keys;
}

}  // namespace

absl::StatusOr<std::optional<Options>> ParseIngestBenchArgs(const std::vector<std::string>& args) {
  Options o;
  o.cluster_script = OPMAP_SOURCE_DIR "/scripts/clickhouse_cluster.sh";
  config::CommandShape shape;
  shape.config_file = false;
  absl::StatusOr<bool> help = config::ParseCommandLine(args, Keys(), shape, &o, nullptr);
  if (!help.ok()) return help.status();
  if (*help) return std::nullopt;
  if (o.ch_kernels == 0) o.ch_kernels = o.kernels;
  if (o.baseline_clients < 0) o.baseline_clients = o.ch_streams;
  if (!o.sqlite && !o.clickhouse) return absl::InvalidArgumentError("--engines: none given");
  if (o.fleet == 0 && o.scale_kernels > 0 && o.session_kernels / o.sessions_factor < 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sessions-factor ", o.sessions_factor, ": sessions of --session-kernels ",
        o.session_kernels, " / ", o.sessions_factor,
        " would hold fewer than 5 kernels (lower it, or --scale-kernels 0)"));
  }
  return o;
}

std::string IngestBenchUsage() {
  config::CommandShape shape;
  shape.config_file = false;
  return absl::StrCat("usage: ingest_bench [options]\n\n", config::FlagHelp(Keys(), shape));
}

}  // namespace opmap::bench
