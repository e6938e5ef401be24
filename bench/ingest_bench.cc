// ingest_bench: the collector's two headline figures, measured end to end on loopback.
//
//  1. Ingest throughput: a client (this process, the same IngestSender `opmap import`
//     uses) pushes synthetic capture sessions through the real `opmap-collector` binary
//     into a temporary SQLite file, waiting for the durable acks: kernel records/s.
//     Each session is what one capture window of a small model holds: 10k kernels of
//     ~50 names under ~2k operator ranges, with one launch API record per kernel.
//  2. Query latency: with ~10 M kernels stored (the ingest run's), 100 runs of a
//     latency-percentile query of kernel durations grouped by layer type: p50 / p99 ms.
//
// Prints the figures beside their targets. Options: --help.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "analysis/model/trace.h"
#include "analysis/wire/batch_codec.h"
#include "cli/grpc_client.h"
#include "cli/ingest_sender.h"
#include "opmap/v1/query.grpc.pb.h"
#include "tests/integration/collector_fixture.h"

namespace {

using opmap::analysis::Trace;

constexpr char kUsage[] = R"(usage: ingest_bench [options]

  --kernels N          kernel records to ingest in all (default 10000000)
  --session-kernels N  kernels per synthetic session (default 10000)
  --batch-records N    records per batch (default 20000)
  --streams N          concurrent Ingest streams from this client (default 2)
  --window N           unacknowledged batches per stream (default 64)
  --query-runs N       latency queries to time (default 100)
  --query-range-cut    query [first session start, +1 h) instead of all time: a range
                       that cuts through the rollup bucket holding every session, so the
                       collector reads each session's own rows (the slow path)
  --collector-bin P    the opmap-collector binary (default: OPMAP_BIN_DIR)
  --dir D              where the SQLite file goes (default: a fresh temp dir, removed)
)";

struct Options {
  int64_t kernels = 10'000'000;
  int session_kernels = 10'000;
  size_t batch_records = 20'000;
  int streams = 2;
  size_t window = 64;
  int query_runs = 100;
  bool query_range_cut = false;
  std::string dir;
};

constexpr int64_t kSessionStartNs = 1'760'000'000'000'000'000;

// One synthetic capture session: operator ranges on one thread, each launching 5
// kernels through cudaLaunchKernel (correlation ids), 50 kernel names across the
// layer types.
Trace MakeSession(int kernels) {
  static const char* kOps[] = {"aten::addmm", "aten::mm", "aten::bmm",
                               "aten::_flash_attention_forward", "aten::native_layer_norm",
                               "aten::add", "aten::mul", "aten::gelu", "aten::_softmax",
                               "aten::embedding", "aten::copy_", "nccl:all_reduce"};
  // {prefix, suffix} around a tile size: 10 stems x 5 sizes = 50 names.
  static const char* kKernelStems[][2] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize", "x128x64"},
      {"ampere_sgemm_", "x64_nn"},
      {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<", ">>"},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<", ">"},
      {"void at::native::vectorized_elementwise_kernel<", ", add>"},
      {"void at::native::vectorized_elementwise_kernel<", ", mul>"},
      {"void at::native::(anonymous namespace)::softmax_warp_forward<", ">"},
      {"void at::native::indexSelectLargeIndex<", ">"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL<", ">"},
      {"void at::native::unrolled_elementwise_kernel<", ", gelu>"}};
  Trace t;
  t.info.format = "live";
  t.info.process = 4242;
  t.info.gpu_names = {"NVIDIA H200"};
  auto launch_name = t.strings.Intern("cudaLaunchKernel");
  std::vector<opmap::analysis::StringId> ops, names;
  for (const char* op : kOps) ops.push_back(t.strings.Intern(op));
  for (int i = 0; i < 50; ++i) {
    names.push_back(t.strings.Intern(
        absl::StrCat(kKernelStems[i % 10][0], 64 << (i / 10), kKernelStems[i % 10][1])));
  }
  // Each kernel name belongs to one operator (as in real models), with its own typical
  // duration from 2 µs to 200 µs and a log-normal spread of ±25% around it.
  std::vector<std::vector<int>> op_kernels(std::size(kOps));
  std::vector<double> base_ns(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    op_kernels[n % std::size(kOps)].push_back(static_cast<int>(n));
    base_ns[n] = 2'000.0 * std::pow(100.0, static_cast<double>(n) / (names.size() - 1));
  }
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> spread(0.0, 0.25);
  const int64_t t0 = kSessionStartNs;
  int64_t correlation = 1;
  for (int k = 0; k < kernels; k += 5) {
    const int op = (k / 5) % static_cast<int>(std::size(kOps));
    opmap::analysis::Range r;
    r.start_ns = t0 + (k / 5) * 10'000;
    r.dur_ns = 9'000;
    r.name = ops[op];
    r.kind = opmap::analysis::RangeKind::kCpuOp;
    r.process = 4242;
    r.thread = 4243;
    t.ranges.push_back(r);
    for (int j = 0; j < 5 && k + j < kernels; ++j) {
      opmap::analysis::ApiCall a;
      a.start_ns = r.start_ns + 100 + j * 1'500;
      a.dur_ns = 1'000;
      a.name = launch_name;
      a.process = 4242;
      a.thread = 4243;
      a.correlation = correlation;
      t.api_calls.push_back(a);
      const int n = op_kernels[op][(k / 5 / std::size(kOps) + j) % op_kernels[op].size()];
      opmap::analysis::GpuEvent g;
      g.start_ns = a.start_ns + 5'000;
      g.dur_ns = std::max<int64_t>(1, std::llround(base_ns[n] * spread(rng)));
      g.name = names[n];
      g.device = 0;
      g.stream = 7;
      g.correlation = correlation++;
      t.gpu_events.push_back(g);
    }
  }
  return t;
}

// CPU seconds (user + system) a process has used so far, from /proc/PID/stat; -1 when
// unreadable. Load-independent, unlike throughput on a shared machine.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) end with ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  uint64_t utime = 0, stime = 0;  // fields 14 and 15 of stat(5): 11 and 12 after ')'
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return -1;
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

double SelfCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

std::string Commas(int64_t v) {
  std::string s = absl::StrCat(v), out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it, ++n) {
    if (n && n % 3 == 0 && *it != '-') out.push_back(',');
    out.push_back(*it);
  }
  return std::string(out.rbegin(), out.rend());
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](auto* v) {
      return i + 1 < argc && absl::SimpleAtoi(argv[++i], v) && *v > 0;
    };
    if (a == "--kernels") { if (!next(&o->kernels)) return false; }
    else if (a == "--session-kernels") { if (!next(&o->session_kernels)) return false; }
    else if (a == "--batch-records") { if (!next(&o->batch_records)) return false; }
    else if (a == "--streams") { if (!next(&o->streams)) return false; }
    else if (a == "--window") { if (!next(&o->window)) return false; }
    else if (a == "--query-runs") { if (!next(&o->query_runs)) return false; }
    else if (a == "--query-range-cut") { o->query_range_cut = true; }
    else if (a == "--collector-bin" && i + 1 < argc) {
      setenv("OPMAP_BIN_DIR",
             std::filesystem::path(argv[++i]).parent_path().string().c_str(), 1);
    } else if (a == "--dir" && i + 1 < argc) { o->dir = argv[++i]; }
    else return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseArgs(argc, argv, &opt)) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  opmap::testing::TempDir temp;
  const std::string dir = opt.dir.empty() ? temp.path() : opt.dir;
  opmap::testing::CollectorProcess::Options copt;
  copt.dir = dir;
  opmap::testing::CollectorProcess collector(copt);
  if (absl::Status s = collector.Start(); !s.ok()) {
    std::fprintf(stderr, "ingest_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }

  // The session template, batched once; each session differs only in its id.
  const Trace session = MakeSession(opt.session_kernels);
  opmap::analysis::BatchingOptions batching;
  batching.agent_id = "bench-agent";
  batching.session_id = "template";
  batching.resource.set_host("bench-host");
  batching.resource.set_pid(4242);
  batching.resource.set_model_name("synthetic");
  batching.resource.set_model_revision("r1");
  batching.max_records_per_batch = opt.batch_records;
  absl::StatusOr<std::vector<opmap::v1::Batch>> tmpl =
      opmap::analysis::TraceToBatches(session, batching);
  if (!tmpl.ok()) {
    std::fprintf(stderr, "ingest_bench: %s\n", std::string(tmpl.status().message()).c_str());
    return 1;
  }
  const int64_t sessions = (opt.kernels + opt.session_kernels - 1) / opt.session_kernels;
  const int64_t records_per_session = static_cast<int64_t>(
      session.gpu_events.size() + session.api_calls.size() + session.ranges.size());
  size_t payload_bytes = 0;
  for (const auto& b : *tmpl) payload_bytes += b.ByteSizeLong();
  std::printf("ingest_bench: %s sessions x %s kernels (+%s launches, %s operator ranges) in "
              "%zu batches of <= %zu records (%.1f MB/session on the wire), %d stream(s), "
              "window %zu, into SQLite at %s\n",
              Commas(sessions).c_str(), Commas(opt.session_kernels).c_str(),
              Commas(session.api_calls.size()).c_str(), Commas(session.ranges.size()).c_str(),
              tmpl->size(), opt.batch_records, payload_bytes / 1e6, opt.streams, opt.window,
              collector.db().c_str());
  std::fflush(stdout);

  opmap::cli::ConnectionFlags flags;
  flags.collectors = {collector.address()};
  flags.token = opmap::testing::kAgentToken;
  auto client = opmap::cli::CollectorClient::Create(flags);
  if (!client.ok()) return 1;

  // Sessions are dealt to the streams round-robin; each stream pulls its next batch.
  std::atomic<int64_t> next_session{0};
  std::atomic<int64_t> settled_batches{0};
  std::vector<std::thread> threads;
  std::vector<grpc::Status> statuses(opt.streams);
  const double collector_cpu0 = ProcessCpuSeconds(collector.pid());
  const double client_cpu0 = SelfCpuSeconds();
  const absl::Time start = absl::Now();
  for (int s = 0; s < opt.streams; ++s) {
    threads.emplace_back([&, s] {
      opmap::cli::SenderOptions so;
      so.window = opt.window;
      so.progress_interval = absl::Milliseconds(200);
      int64_t last = 0;
      so.progress = [&](const opmap::cli::SenderProgress& p) {
        settled_batches += p.settled - last;
        last = p.settled;
      };
      so.log = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
      opmap::cli::IngestSender sender(client->get(), so);
      int64_t current = -1;
      size_t index = 0;
      opmap::cli::SenderResult r = sender.Run([&](opmap::v1::Batch* out) {
        if (current < 0 || index == tmpl->size()) {
          current = next_session.fetch_add(1);
          index = 0;
          if (current >= sessions) return false;
        }
        *out = (*tmpl)[index++];
        out->set_session_id(absl::StrCat("bench-", current));
        return true;
      });
      statuses[s] = r.status;
    });
  }
  // A line every 2 s while it runs.
  std::atomic<bool> done{false};
  std::thread ticker([&] {
    while (!done) {
      for (int i = 0; i < 20 && !done; ++i) absl::SleepFor(absl::Milliseconds(100));
      if (done) break;
      double secs = absl::ToDoubleSeconds(absl::Now() - start);
      int64_t k = settled_batches.load() * opt.session_kernels / static_cast<int64_t>(tmpl->size());
      std::fprintf(stderr, "  %.0f s: ~%s kernels acked (~%s/s)\n", secs, Commas(k).c_str(),
                   Commas(static_cast<int64_t>(k / secs)).c_str());
    }
  });
  for (auto& t : threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const double collector_cpu = ProcessCpuSeconds(collector.pid()) - collector_cpu0;
  const double client_cpu = SelfCpuSeconds() - client_cpu0;
  done = true;
  ticker.join();
  for (const grpc::Status& s : statuses) {
    if (!s.ok()) {
      std::fprintf(stderr, "ingest_bench: ingest failed: %s\ncollector log:\n%s\n",
                   opmap::cli::StatusLine(s).c_str(), collector.Log().c_str());
      return 1;
    }
  }
  const int64_t kernels = sessions * opt.session_kernels;
  const double rate = kernels / seconds;
  std::printf("ingest: %s kernel records (%s records in all) acked durable in %.2f s\n",
              Commas(kernels).c_str(), Commas(sessions * records_per_session).c_str(),
              seconds);
  std::printf("  -> %s kernel records/s   (target >= 1,000,000/s: %s)   [%s records/s of "
              "all kinds]\n",
              Commas(static_cast<int64_t>(rate)).c_str(), rate >= 1e6 ? "met" : "NOT met",
              Commas(static_cast<int64_t>(sessions * records_per_session / seconds)).c_str());
  std::printf("  CPU: collector %.2f s (%.2f s per M kernel records), client %.2f s (%.2f s per "
              "M), in %.2f s on %ld cores\n",
              collector_cpu, collector_cpu / (kernels / 1e6), client_cpu,
              client_cpu / (kernels / 1e6), seconds, sysconf(_SC_NPROCESSORS_ONLN));
  std::error_code ec;
  std::printf("  store: %.0f MB (SQLite file + WAL), collector: batches %" PRId64
              ", sessions complete %" PRId64 "\n",
              (std::filesystem::file_size(collector.db(), ec) +
               std::filesystem::file_size(collector.db() + "-wal", ec)) / 1e6,
              collector.Metric("opmap_collector_batches_total"),
              collector.Metric("opmap_collector_sessions_complete_total"));
  std::fflush(stdout);

  // Query latency.
  flags.token = opmap::testing::kAnalystToken;
  auto analyst = opmap::cli::CollectorClient::Create(flags);
  if (!analyst.ok()) return 1;
  auto stub = opmap::v1::Query::NewStub((*analyst)->NewChannel(0));
  opmap::v1::LatencyRequest req;
  req.set_subject(opmap::v1::LATENCY_SUBJECT_KERNEL);
  req.add_group_by(opmap::v1::GROUP_BY_LAYER_TYPE);
  if (opt.query_range_cut) {
    req.mutable_range()->set_start_ns(kSessionStartNs);
    req.mutable_range()->set_end_ns(kSessionStartNs + int64_t{3600} * 1'000'000'000);
  }
  for (double q : {0.5, 0.95, 0.99}) req.add_quantiles(q);
  std::vector<double> ms;
  double query_cpu0 = 0;
  uint64_t counted = 0;
  size_t groups = 0;
  for (int i = 0; i < opt.query_runs + 1; ++i) {
    grpc::ClientContext ctx;
    (*analyst)->PrepareContext(&ctx, absl::Seconds(60));
    opmap::v1::LatencyResponse resp;
    absl::Time t = absl::Now();
    grpc::Status s = stub->LatencyPercentiles(&ctx, req, &resp);
    double elapsed = absl::ToDoubleMilliseconds(absl::Now() - t);
    if (!s.ok()) {
      std::fprintf(stderr, "ingest_bench: query failed: %s\n", opmap::cli::StatusLine(s).c_str());
      return 1;
    }
    if (i == 0) {  // the first run warms the connection; not timed
      for (const auto& r : resp.rows()) counted += r.count();
      groups = resp.rows_size();
      query_cpu0 = ProcessCpuSeconds(collector.pid());
      continue;
    }
    ms.push_back(elapsed);
  }
  const double query_cpu = ProcessCpuSeconds(collector.pid()) - query_cpu0;
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double q) { return ms[static_cast<size_t>(q * (ms.size() - 1))]; };
  std::printf("query: kernel-duration percentiles (p50/p95/p99) by layer type over %s stored "
              "kernels (%zu groups), %d runs%s\n",
              Commas(static_cast<int64_t>(counted)).c_str(), groups, opt.query_runs,
              opt.query_range_cut ? ", range cutting through their bucket" : "");
  std::printf("  -> p50 %.1f ms, p99 %.1f ms, max %.1f ms   (target p99 <= 100 ms: %s)\n",
              pct(0.5), pct(0.99), ms.back(), pct(0.99) <= 100 ? "met" : "NOT met");
  std::printf("  collector CPU %.2f ms per query\n", query_cpu * 1e3 / opt.query_runs);
  if (counted != static_cast<uint64_t>(kernels)) {
    std::printf("  WARNING: the query counted %" PRIu64 " kernels, %" PRId64 " were ingested\n",
                counted, kernels);
  }
  collector.Stop();
  return 0;
}
