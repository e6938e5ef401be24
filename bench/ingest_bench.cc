// ingest_bench: the collector's headline figures, measured end to end on loopback, for one
// collector on SQLite and, in the same run, two collector replicas on a ClickHouse cluster
// (--engines sqlite,clickhouse; `cmake --build build --target bench_scale_out`).
//
//  1. Ingest throughput: a client (this process, the same IngestSender `opmap import`
//     uses) pushes synthetic capture sessions through the real `opmap-collector` binary
//     (SQLite: one process, a temporary file; ClickHouse: --collectors processes with the
//     same `--store clickhouse://...`, the streams dealt round-robin between them), waiting
//     for the durable acks: kernel records/s. Each session is what one capture window of a
//     small model holds: 10k kernels of ~50 names under ~2k operator ranges, with one
//     launch API record per kernel; sessions are spread over --agents agent ids (the
//     ClickHouse tables are sharded by agent).
//  2. Query latency: with the ingest run's kernels stored (~10 M by default), 100 runs of a
//     latency-percentile query of kernel durations grouped by layer type: p50 / p99 ms.
//  3. ClickHouse only, the engine's own figures (bench/clickhouse_baseline.h): the rate
//     at which clickhouse-client INSERTs the rows the collectors stored, in their block
//     sizes, into a twin database; quantilesTDigest over the raw `events` rows; and the
//     query over --scale-kernels kernels stored in N sessions and in N x --sessions-factor.
//
// ClickHouse: the 2-shard cluster of scripts/clickhouse_cluster.sh, started in a temp dir and
// stopped at the end, or the running one OPMAP_CLICKHOUSE_ENV names (then only the bench's
// own database is dropped). Prints the figures beside their targets and as ratios to SQLite.
// Options: --help.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "analysis/model/trace.h"
#include "analysis/wire/batch_codec.h"
#include "bench/clickhouse_baseline.h"
#include "bench/fleet_sim.h"
#include "bench/ingest_bench_flags.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "bench/ingest_runner.h"
#include "bench/synthetic_session.h"
#include "tests/integration/collector_fixture.h"

namespace {

using opmap::analysis::Trace;
using opmap::bench::IngestBenchUsage;
using opmap::bench::Options;
using opmap::bench::ParseIngestBenchArgs;
using opmap::bench::Commas;
using opmap::bench::kSessionStartNs;

struct EngineFigures {
  std::string name;
  int64_t kernels = 0;
  int64_t sessions = 0;
  opmap::bench::IngestResult ingest;
  double server_cpu = -1;  // ClickHouse servers, all together; -1: none
  double zk_cpu = -1;      // ZooKeeper
  opmap::bench::QueryResult query;
  double rate() const { return kernels / ingest.seconds; }
};

double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

void PrintIngest(const EngineFigures& f, int64_t records_per_session, int session_kernels) {
  const int64_t records = f.kernels / session_kernels * records_per_session;
  std::printf("ingest [%s]: %s kernel records (%s records in all) acked durable in %.2f s\n",
              f.name.c_str(), Commas(f.kernels).c_str(), Commas(records).c_str(),
              f.ingest.seconds);
  std::printf("  -> %s kernel records/s   [%s records/s of all kinds]\n",
              Commas(static_cast<int64_t>(f.rate())).c_str(),
              Commas(static_cast<int64_t>(records / f.ingest.seconds)).c_str());
  std::string per;
  for (double c : f.ingest.collector_cpu) per += absl::StrFormat(" %.1f", c);
  std::printf("  CPU: collector(s)%s s (%.2f s per M kernel records), client %.2f s (%.2f s per "
              "M)",
              per.c_str(), Sum(f.ingest.collector_cpu) / (f.kernels / 1e6), f.ingest.client_cpu,
              f.ingest.client_cpu / (f.kernels / 1e6));
  if (f.server_cpu >= 0) {
    std::printf(", ClickHouse servers %.1f s (%.2f s per M)", f.server_cpu,
                f.server_cpu / (f.kernels / 1e6));
  }
  if (f.zk_cpu >= 0) {
    std::printf(", ZooKeeper %.1f s (%.2f s per M)", f.zk_cpu, f.zk_cpu / (f.kernels / 1e6));
  }
  std::printf(", in %.2f s on %ld cores\n", f.ingest.seconds, sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);
}

void PrintQuery(const EngineFigures& f, const Options& opt) {
  const auto& q = f.query;
  std::printf("query [%s]: kernel-duration percentiles (p50/p95/p99) by layer type over %s "
              "stored kernels (%zu groups), %d runs%s\n",
              f.name.c_str(), Commas(static_cast<int64_t>(q.counted)).c_str(), q.groups,
              opt.query_runs, opt.query_range_cut ? ", range cutting through their bucket" : "");
  std::printf("  -> p50 %.1f ms, p99 %.1f ms, max %.1f ms   (target p99 <= 100 ms: %s)\n",
              q.Pct(0.5), q.Pct(0.99), q.ms.back(), q.Pct(0.99) <= 100 ? "met" : "NOT met");
  std::printf("  collector CPU %.2f ms per query\n", q.collector_cpu_ms);
  if (q.counted != static_cast<uint64_t>(f.kernels)) {
    std::printf("  WARNING: the query counted %" PRIu64 " kernels, %" PRId64 " were ingested\n",
                q.counted, f.kernels);
  }
  std::fflush(stdout);
}

// opmap_collector_store_commit_seconds sum / count over the collectors' /metrics.
double MeanCommitMs(const std::vector<opmap::testing::CollectorProcess*>& collectors) {
  double sum = 0, count = 0;
  for (auto* c : collectors) {
    std::string text = opmap::testing::HttpGet(c->metrics_address(), "/metrics");
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      std::vector<absl::string_view> kv = absl::StrSplit(line, ' ');
      double v = 0;
      if (kv.size() != 2 || !absl::SimpleAtod(kv[1], &v)) continue;
      if (kv[0] == "opmap_collector_store_commit_seconds_sum") sum += v;
      if (kv[0] == "opmap_collector_store_commit_seconds_count") count += v;
    }
  }
  return count > 0 ? sum / count * 1e3 : -1;
}

// "; groups of 14.2 batches on average (71 groups)", or "" without group commit.
std::string GroupText(const std::vector<opmap::testing::CollectorProcess*>& collectors) {
  int64_t groups = 0, batches = 0;
  for (auto* c : collectors) {
    groups += c->Metric("opmap_collector_group_commits_total");
    batches += c->Metric("opmap_collector_group_commit_batches_total");
  }
  if (groups <= 0) return "";
  return absl::StrFormat("; groups of %.1f batches on average (%d groups)",
                         static_cast<double>(batches) / groups, groups);
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "ingest_bench: %s\n", std::string(s.message()).c_str());
  return 1;
}

// A session of `kernels` kernels, batched once; each session differs only in its ids.
struct SessionTemplate {
  std::vector<opmap::v1::Batch> batches;
  int kernels = 0;
  int64_t records = 0;  // per session, all kinds
};

absl::StatusOr<SessionTemplate> MakeTemplate(int kernels, const Options& opt) {
  const Trace session = opmap::bench::MakeSession(kernels);
  opmap::analysis::BatchingOptions batching;
  batching.agent_id = "bench-agent";
  batching.session_id = "template";
  batching.resource.set_host("bench-host");
  batching.resource.set_pid(4242);
  batching.resource.set_model_name("synthetic");
  batching.resource.set_model_revision("r1");
  batching.max_records_per_batch = opt.batch_records;
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches =
      opmap::analysis::TraceToBatches(session, batching);
  if (!batches.ok()) return batches.status();
  SessionTemplate t;
  t.batches = std::move(*batches);
  t.kernels = kernels;
  t.records = static_cast<int64_t>(session.gpu_events.size() + session.api_calls.size() +
                                   session.ranges.size());
  size_t payload_bytes = 0;
  for (const auto& b : t.batches) payload_bytes += b.ByteSizeLong();
  std::printf("ingest_bench: sessions of %s kernels (+%s launches, %s operator ranges) in "
              "%zu batches of <= %zu records (%.2f MB/session on the wire), %d agent ids, "
              "window %zu\n",
              Commas(kernels).c_str(), Commas(session.api_calls.size()).c_str(),
              Commas(session.ranges.size()).c_str(), t.batches.size(), opt.batch_records,
              payload_bytes / 1e6, opt.agents, opt.window);
  std::fflush(stdout);
  return t;
}

opmap::bench::IngestPlan PlanFor(const SessionTemplate& t, int64_t kernels, int streams,
                                 const Options& opt, std::string label) {
  opmap::bench::IngestPlan plan;
  plan.batches = &t.batches;
  plan.sessions = (kernels + t.kernels - 1) / t.kernels;
  plan.session_kernels = t.kernels;
  plan.streams = streams;
  plan.window = opt.window;
  plan.agents = opt.agents;
  plan.label = std::move(label);
  return plan;
}

// --collectors collectors on the store `url`, their files under `temp` (owned by *owned).
absl::StatusOr<std::vector<opmap::testing::CollectorProcess*>> StartClickHouseCollectors(
    const std::string& url, const Options& opt, const opmap::testing::TempDir& temp,
    std::vector<std::unique_ptr<opmap::testing::CollectorProcess>>* owned) {
  std::vector<opmap::testing::CollectorProcess*> collectors;
  for (int i = 0; i < opt.collectors; ++i) {
    opmap::testing::CollectorProcess::Options copt;
    copt.dir = temp.File(absl::StrCat("collector", i));
    std::filesystem::create_directories(copt.dir);
    copt.store = url;
    // The synthetic sessions were captured on 2025-10-09: with the default retention the
    // collectors would drop their events (and batches) at their first retention pass.
    copt.extra = {"--raw-retention", "87600h"};
    copt.extra.insert(copt.extra.end(), opt.collector_flags.begin(), opt.collector_flags.end());
    owned->push_back(std::make_unique<opmap::testing::CollectorProcess>(copt));
    if (absl::Status s = owned->back()->Start(); !s.ok()) return s;
    collectors.push_back(owned->back().get());
  }
  return collectors;
}

// The one SQLite collector's options: its files in --dir or `temp`.
opmap::testing::CollectorProcess::Options SqliteCollectorOptions(
    const Options& opt, const opmap::testing::TempDir& temp) {
  opmap::testing::CollectorProcess::Options copt;
  copt.dir = opt.dir.empty() ? temp.path() : opt.dir;
  copt.extra = opt.collector_flags;
  return copt;
}

// --collectors collectors on the database `suffix` names: ingest, then the query.
absl::StatusOr<EngineFigures> RunClickHouse(const opmap::bench::BenchCluster& cluster,
                                            const std::string& suffix,
                                            const SessionTemplate& t, int64_t kernels,
                                            const Options& opt) {
  opmap::testing::TempDir temp;
  std::vector<std::unique_ptr<opmap::testing::CollectorProcess>> owned;
  ASSIGN_OR_RETURN(std::vector<opmap::testing::CollectorProcess*> collectors,
                   StartClickHouseCollectors(cluster.Url(suffix), opt, temp, &owned));
  EngineFigures f;
  f.name = absl::StrCat("clickhouse, ", opt.collectors, " collectors");
  const opmap::bench::IngestPlan plan = PlanFor(t, kernels, opt.ch_streams, opt, "ch" + suffix);
  f.kernels = plan.sessions * t.kernels;
  f.sessions = plan.sessions;
  std::printf("[clickhouse] %s sessions, %d streams over %d collectors, store %s\n",
              Commas(plan.sessions).c_str(), opt.ch_streams, opt.collectors,
              cluster.Url(suffix).c_str());
  std::fflush(stdout);
  const std::vector<pid_t> servers = cluster.ServerPids();
  auto server_cpu = [&] {
    double c = 0;
    for (pid_t p : servers) c += std::max(0.0, opmap::bench::ProcessCpuSeconds(p));
    return c;
  };
  const double server_cpu0 = server_cpu();
  int zk_pid = 0;
  (void)absl::SimpleAtoi(cluster.Env("ZK_PID"), &zk_pid);
  const double zk_cpu0 = zk_pid > 0 ? opmap::bench::ProcessCpuSeconds(zk_pid) : -1;
  auto ingest = opmap::bench::RunIngest(plan, collectors);
  if (!ingest.ok()) return ingest.status();
  f.ingest = *ingest;
  if (!servers.empty()) f.server_cpu = server_cpu() - server_cpu0;
  if (zk_cpu0 >= 0) f.zk_cpu = opmap::bench::ProcessCpuSeconds(zk_pid) - zk_cpu0;
  PrintIngest(f, t.records, t.kernels);
  const std::string db = cluster.database(suffix);
  auto stored = cluster.Query(absl::StrCat(
      "SELECT (SELECT count() FROM ", db, ".batches), (SELECT count() FROM ", db,
      ".sessions), (SELECT count() FROM ", db, ".events), (SELECT sum(bytes) FROM "
      "system.parts WHERE active AND database = '", db, "') FORMAT TSV"));
  std::vector<std::string> cols =
      absl::StrSplit(absl::StripAsciiWhitespace(stored.ok() ? *stored : ""), '\t');
  if (cols.size() == 4) {
    std::printf("  store: batches %s, sessions %s, events %s (through the Distributed "
                "tables); parts on the first server %.0f MB\n",
                cols[0].c_str(), cols[1].c_str(), cols[2].c_str(),
                std::atof(cols[3].c_str()) / 1e6);
  } else {
    std::printf("  store: counts unavailable: %s\n",
                std::string(stored.status().message()).c_str());
  }
  int64_t commits = 0;
  for (auto* c : collectors) commits += c->Metric("opmap_collector_batches_total");
  std::printf("  collectors: batches %" PRId64 " in all; mean store commit %.1f ms%s\n", commits,
              MeanCommitMs(collectors), GroupText(collectors).c_str());
  std::fflush(stdout);
  auto q = opmap::bench::RunLatencyQuery(*collectors[0], opt.query_runs, opt.query_range_cut,
                                         kSessionStartNs, f.kernels, 60);
  if (!q.ok()) return q.status();
  f.query = *q;
  PrintQuery(f, opt);
  for (auto* c : collectors) c->Stop();
  return f;
}

void PrintRatios(const EngineFigures& a, const EngineFigures& b) {
  std::printf("\nratios, %s / %s (same run):\n", b.name.c_str(), a.name.c_str());
  std::printf("  ingest kernel records/s: %s / %s = %.3fx\n",
              Commas(static_cast<int64_t>(b.rate())).c_str(),
              Commas(static_cast<int64_t>(a.rate())).c_str(), b.rate() / a.rate());
  std::printf("  query p99 over %s vs %s kernels: %.1f ms / %.1f ms = %.1fx (p50 %.1fx)\n",
              Commas(b.kernels).c_str(), Commas(a.kernels).c_str(), b.query.Pct(0.99),
              a.query.Pct(0.99), b.query.Pct(0.99) / a.query.Pct(0.99),
              b.query.Pct(0.5) / a.query.Pct(0.5));
}

// The engine's own figures beside the collectors' (clickhouse_baseline.h).
absl::Status RunEngineBaselines(const opmap::bench::BenchCluster& cluster,
                                const EngineFigures& f, const Options& opt) {
  auto raw = opmap::bench::RawQuantiles(cluster, cluster.database(), opt.query_runs);
  if (!raw.ok()) return raw.status();
  std::printf("engine query: quantilesTDigest(0.5, 0.95, 0.99) of kernel duration_ns by "
              "layer type over %s raw events rows (%zu groups), %d runs over HTTP\n",
              Commas(static_cast<int64_t>(raw->counted)).c_str(), raw->groups, opt.query_runs);
  std::printf("  -> p50 %.1f ms, p99 %.1f ms; the collector's p99 / this = %.2fx "
              "(target <= 2x: %s)\n",
              raw->Pct(0.5), raw->Pct(0.99), f.query.Pct(0.99) / raw->Pct(0.99),
              f.query.Pct(0.99) <= 2 * raw->Pct(0.99) ? "met" : "NOT met");
  std::fflush(stdout);
  if (opt.baseline_clients == 0) return absl::OkStatus();
  // The twin: the schema the store makes, on a database of its own.
  {
    auto twin = opmap::collector::ClickHouseStore::Open(cluster.Url("_engine"));
    if (!twin.ok()) return twin.status();
  }
  opmap::testing::TempDir work;
  opmap::bench::BaselinePlan plan;
  plan.cluster = &cluster;
  plan.source_db = cluster.database();
  plan.target_db = cluster.database("_engine");
  plan.sessions = f.sessions;
  plan.agents = opt.agents;
  plan.clients = opt.baseline_clients;
  plan.work_dir = work.path();
  auto base = opmap::bench::InsertBaseline(plan);
  if (!base.ok()) return base.status();
  const double rate = f.kernels / base->seconds;
  std::printf("engine ingest: clickhouse-client, %d at once, INSERTs the same rows (RowBinary, "
              "%s rows, %.0f MB, %s blocks) into the same Distributed tables in %.2f s\n",
              plan.clients, Commas(base->rows).c_str(), base->bytes / 1e6,
              Commas(base->blocks).c_str(), base->seconds);
  for (const std::string& t : base->tables) std::printf("    %s\n", t.c_str());
  std::printf("  -> %s kernel records/s; the collectors' rate / this = %.3fx "
              "(target >= 0.5x: %s)\n",
              Commas(static_cast<int64_t>(rate)).c_str(), f.rate() / rate,
              f.rate() >= 0.5 * rate ? "met" : "NOT met");
  std::fflush(stdout);
  return absl::OkStatus();
}

// --fleet: the fleet simulation (bench/fleet_sim.h) on each engine asked for.
int RunFleetMode(const Options& opt) {
  struct Class {
    int kernels;
    double weight;
  };
  const Class mix[] = {{100, 0.55}, {1'000, 0.30}, {10'000, 0.13}, {100'000, 0.02}};
  std::vector<SessionTemplate> templates;
  for (const Class& c : mix) {
    auto t = MakeTemplate(c.kernels, opt);
    if (!t.ok()) return Fail(t.status());
    templates.push_back(*std::move(t));
  }
  opmap::bench::FleetPlan plan;
  for (size_t i = 0; i < templates.size(); ++i) {
    plan.classes.push_back({&templates[i].batches, mix[i].kernels, mix[i].weight});
  }
  plan.agents = opt.fleet;
  plan.streams = opt.fleet_streams;
  if (opt.sqlite) {
    opmap::testing::TempDir temp;
    opmap::testing::CollectorProcess collector(SqliteCollectorOptions(opt, temp));
    if (absl::Status s = collector.Start(); !s.ok()) return Fail(s);
    plan.windows = opt.fleet_windows;
    plan.label = "fleet-sqlite";
    auto r = opmap::bench::RunFleet(plan, {&collector});
    if (!r.ok()) return Fail(r.status());
    std::error_code ec;
    opmap::bench::EngineCost cost;
    cost.store_bytes = static_cast<double>(std::filesystem::file_size(collector.db(), ec) +
                                           std::filesystem::file_size(collector.db() + "-wal", ec));
    opmap::bench::PrintFleet("sqlite, 1 collector", plan, *r, cost);
    collector.Stop();
  }
  if (opt.clickhouse) {
    auto cluster = opmap::bench::BenchCluster::Acquire(opt.cluster_script);
    if (!cluster.ok()) return Fail(cluster.status());
    opmap::testing::TempDir temp;
    std::vector<std::unique_ptr<opmap::testing::CollectorProcess>> owned;
    auto collectors = StartClickHouseCollectors((*cluster)->Url("_fleet"), opt, temp, &owned);
    if (!collectors.ok()) return Fail(collectors.status());
    const std::vector<pid_t> servers = (*cluster)->ServerPids();
    auto server_cpu = [&] {
      double c = 0;
      for (pid_t p : servers) c += std::max(0.0, opmap::bench::ProcessCpuSeconds(p));
      return c;
    };
    int zk_pid = 0;
    (void)absl::SimpleAtoi((*cluster)->Env("ZK_PID"), &zk_pid);
    const double server0 = server_cpu();
    const double zk0 = zk_pid > 0 ? opmap::bench::ProcessCpuSeconds(zk_pid) : -1;
    plan.windows = opt.ch_fleet_windows;
    plan.label = "fleet-ch";
    auto r = opmap::bench::RunFleet(plan, *collectors);
    if (!r.ok()) return Fail(r.status());
    opmap::bench::EngineCost cost;
    cost.server_cpu = server_cpu() - server0;
    if (zk0 >= 0) cost.zk_cpu = opmap::bench::ProcessCpuSeconds(zk_pid) - zk0;
    auto bytes = (*cluster)->Query(absl::StrCat(
        "SELECT sum(bytes) FROM system.parts WHERE active AND database = '",
        (*cluster)->database("_fleet"), "' FORMAT TSV"));
    if (bytes.ok()) cost.store_bytes = std::atof(bytes->c_str());
    opmap::bench::PrintFleet(absl::StrCat("clickhouse, ", opt.collectors,
                                          " collectors (store bytes: the first server's parts)"),
                             plan, *r, cost);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<std::optional<Options>> parsed =
      ParseIngestBenchArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.ok()) {
    std::fprintf(stderr, "ingest_bench: %s\nrun `ingest_bench --help` for usage\n",
                 std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (!parsed->has_value()) {
    std::fputs(IngestBenchUsage().c_str(), stdout);
    return 0;
  }
  const Options& opt = **parsed;
  if (opt.fleet > 0) return RunFleetMode(opt);
  absl::StatusOr<SessionTemplate> tmpl = MakeTemplate(opt.session_kernels, opt);
  if (!tmpl.ok()) return Fail(tmpl.status());

  std::vector<EngineFigures> figures;
  if (opt.sqlite) {
    opmap::testing::TempDir temp;
    opmap::testing::CollectorProcess collector(SqliteCollectorOptions(opt, temp));
    if (absl::Status s = collector.Start(); !s.ok()) return Fail(s);
    EngineFigures f;
    f.name = "sqlite, 1 collector";
    const opmap::bench::IngestPlan plan = PlanFor(*tmpl, opt.kernels, opt.streams, opt, "sqlite");
    f.kernels = plan.sessions * opt.session_kernels;
    f.sessions = plan.sessions;
    std::printf("[sqlite] %s sessions, %d stream(s), into %s\n", Commas(plan.sessions).c_str(),
                opt.streams, collector.db().c_str());
    std::fflush(stdout);
    auto ingest = opmap::bench::RunIngest(plan, {&collector});
    if (!ingest.ok()) return Fail(ingest.status());
    f.ingest = *ingest;
    PrintIngest(f, tmpl->records, opt.session_kernels);
    std::error_code ec;
    std::printf("  store: %.0f MB (SQLite file + WAL), collector: batches %" PRId64
                ", sessions complete %" PRId64 "\n",
                (std::filesystem::file_size(collector.db(), ec) +
                 std::filesystem::file_size(collector.db() + "-wal", ec)) / 1e6,
                collector.Metric("opmap_collector_batches_total"),
                collector.Metric("opmap_collector_sessions_complete_total"));
    std::printf("  mean store commit %.1f ms%s\n", MeanCommitMs({&collector}),
                GroupText({&collector}).c_str());
    std::fflush(stdout);
    auto q = opmap::bench::RunLatencyQuery(collector, opt.query_runs, opt.query_range_cut,
                                           kSessionStartNs, f.kernels, 0);
    if (!q.ok()) return Fail(q.status());
    f.query = *q;
    PrintQuery(f, opt);
    collector.Stop();
    figures.push_back(f);
  }
  if (opt.clickhouse) {
    const absl::Time t0 = absl::Now();
    auto cluster = opmap::bench::BenchCluster::Acquire(opt.cluster_script);
    if (!cluster.ok()) return Fail(cluster.status());
    std::printf("[clickhouse] cluster %s (%s, %.1f s), database %s\n",
                (*cluster)->Env("CH_CLUSTER").c_str(),
                (*cluster)->owned() ? "started here" : "OPMAP_CLICKHOUSE_ENV",
                absl::ToDoubleSeconds(absl::Now() - t0), (*cluster)->database().c_str());
    auto f = RunClickHouse(**cluster, "", *tmpl, opt.ch_kernels, opt);
    if (!f.ok()) return Fail(f.status());
    figures.push_back(*f);
    if (absl::Status s = RunEngineBaselines(**cluster, *f, opt); !s.ok()) return Fail(s);
    if (opt.scale_kernels > 0) {
      // The same kernels in sessions_factor times as many sessions: the query's cost
      // should follow keys and buckets, not sessions.
      auto small = MakeTemplate(opt.session_kernels / opt.sessions_factor, opt);
      if (!small.ok()) return Fail(small.status());
      auto few = RunClickHouse(**cluster, "_few", *tmpl, opt.scale_kernels, opt);
      if (!few.ok()) return Fail(few.status());
      auto many = RunClickHouse(**cluster, "_many", *small, opt.scale_kernels, opt);
      if (!many.ok()) return Fail(many.status());
      std::printf("\nsessions scaling: query p99 over %s kernels in %s sessions / in %s "
                  "sessions: %.1f ms / %.1f ms = %.2fx (target <= 2x: %s)\n",
                  Commas(many->kernels).c_str(), Commas(many->sessions).c_str(),
                  Commas(few->sessions).c_str(), many->query.Pct(0.99), few->query.Pct(0.99),
                  many->query.Pct(0.99) / few->query.Pct(0.99),
                  many->query.Pct(0.99) <= 2 * few->query.Pct(0.99) ? "met" : "NOT met");
    }
  }
  if (figures.size() == 2) PrintRatios(figures[0], figures[1]);
  return 0;
}
