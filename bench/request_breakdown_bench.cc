// What the per-request breakdown and tail explanation (analysis/summary/request_breakdown.h,
// tail_explanation.h) add to `opmap analyze`: per trace, best of N, the time to import,
// map and summarize it (Summarize includes the breakdown) against the breakdown alone on
// the same trace in the same run; and against a real opmap-collector (SQLite, loopback
// gRPC, its store included) storing the trace as --collector-sessions sessions: its process CPU per session, and the
// breakdown's part of it from the collector's own counter
// (opmap_collector_request_breakdown_cpu_seconds_total). Target (docs/benchmarks.md): ≤ 10%.
//
// usage: request_breakdown_bench [--reps N] [--collector-sessions N] [FILE...]
//   FILE: Kineto JSON (.json, .json.gz) or an opmap capture file (.opcap); default: every
//   Kineto trace under $OPMAP_SHARED_DIR/traces (default <repo>/../shared).
// Exit status 0 whatever the figures (a benchmark, not a test); 2 on a bad argument or file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/import/capture_import.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/request_breakdown.h"
#include "analysis/wire/batch_codec.h"
#include "analysis/summary/tail_explanation.h"
#include "analysis/summary/trace_summary.h"
#include "bench/ingest_runner.h"
#include "common/config/flag_config.h"
#include "common/text/aligned_table.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

absl::StatusOr<opmap::analysis::Trace> Load(const std::string& path, std::string bytes) {
  if (path.size() > 6 && path.ends_with(".opcap")) return opmap::analysis::ImportCaptureFile(bytes);
  return opmap::analysis::ImportKinetoBytes(std::move(bytes));
}

// The trace stored `sessions` times by a real SQLite collector: its CPU per session and
// the breakdown's CPU per session, as the collector counted it.
struct CollectorCost {
  double cpu_s = 0;
  double breakdown_s = 0;
};

absl::StatusOr<CollectorCost> MeasureCollector(const std::vector<opmap::v1::Batch>& batches,
                                               int64_t kernels, int64_t sessions) {
  opmap::testing::TempDir temp;
  opmap::testing::CollectorProcess::Options options;
  options.dir = temp.path();
  opmap::testing::CollectorProcess collector(options);
  if (absl::Status s = collector.Start(); !s.ok()) return s;
  opmap::bench::IngestPlan plan;
  plan.batches = &batches;
  plan.sessions = sessions;
  plan.session_kernels = static_cast<int>(kernels);
  plan.agents = 1;
  plan.label = "breakdown";
  absl::StatusOr<opmap::bench::IngestResult> ingest = opmap::bench::RunIngest(plan, {&collector});
  if (!ingest.ok()) return ingest.status();
  const double breakdown =
      collector.MetricValue("opmap_collector_request_breakdown_cpu_seconds_total");
  if (breakdown < 0) return absl::InternalError("the collector exposes no breakdown counter");
  return CollectorCost{ingest->collector_cpu[0] / static_cast<double>(sessions),
                       breakdown / static_cast<double>(sessions)};
}

}  // namespace

struct Flags {
  int64_t reps = 5;
  int64_t collector_sessions = 20;
};

int main(int argc, char** argv) {
  const std::vector<opmap::config::ConfigKey<Flags>> keys = {
      {"reps", false, "N", "runs per trace; the best is reported (default 5)",
       opmap::config::ParsedSetter(&Flags::reps, &opmap::config::ParsePositive)},
      {"collector-sessions", false, "N",
       "sessions of each trace stored by a real opmap-collector, at least (default 20, more "
       "for small traces: ~1 M records; 0: skip it)",
       opmap::config::ParsedSetter(&Flags::collector_sessions, &opmap::config::ParseCount)},
  };
  const opmap::config::CommandShape shape{.config_file = false, .operands = true};
  Flags flags;
  std::vector<std::string> files;
  absl::StatusOr<bool> help = opmap::config::ParseCommandLine(
      std::vector<std::string>(argv + 1, argv + argc), keys, shape, &flags, &files);
  if (!help.ok()) {
    std::fprintf(stderr, "request_breakdown_bench: %s\n",
                 std::string(help.status().message()).c_str());
    return 2;
  }
  if (*help) {
    std::printf("usage: request_breakdown_bench [--reps N] [--collector-sessions N] [FILE...]\n%s",
                opmap::config::FlagHelp(keys, shape).c_str());
    return 0;
  }
  const int reps = static_cast<int>(std::min<int64_t>(flags.reps, 1000));
  if (files.empty()) {
    const char* env = std::getenv("OPMAP_SHARED_DIR");
    const std::filesystem::path shared =
        env != nullptr ? env : std::filesystem::path(OPMAP_SOURCE_DIR) / ".." / "shared";
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(shared / "traces", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::string p = it->path().string();
      if (p.find("capture_traces") == std::string::npos &&
          (p.ends_with(".json.gz") || p.ends_with(".json"))) {
        files.push_back(p);
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      std::printf("unavailable: no traces under %s\n", (shared / "traces").c_str());
      return 0;
    }
  }
  std::printf("best of %d; target: the breakdown <= 10%% of analyze (import + map + summarize)\n",
              reps);
  opmap::text::AlignedTable table({"trace", "kernels", "requests", "analyze_s", "summary_s",
                                    "breakdown_s", "ratio", "collector_s", "collector_ratio"},
                                   {false, true, true, true, true, true, true, true, true});
  // The analyze target is about the largest trace (bytes on disk); the collector one about
  // every trace with requests.
  size_t largest_bytes = 0;
  double largest_ratio = 0, worst_collector = 0;
  std::string largest_name;
  for (const std::string& path : files) {
    std::string bytes;
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "request_breakdown_bench: cannot read %s\n", path.c_str());
      return 2;
    }
    double best_analyze = 1e30, best_summary = 1e30, best_breakdown = 1e30;
    // The session as an agent sends it.
    std::vector<opmap::v1::Batch> session_batches;
    int64_t kernels = 0;
    {
      absl::StatusOr<opmap::analysis::Trace> trace = Load(path, bytes);
      if (!trace.ok()) {
        std::fprintf(stderr, "request_breakdown_bench: %s: %s\n", path.c_str(),
                     std::string(trace.status().message()).c_str());
        return 2;
      }
      opmap::analysis::BatchingOptions batching;
      batching.agent_id = "bench";
      batching.session_id = "s";
      absl::StatusOr<std::vector<opmap::v1::Batch>> batches =
          opmap::analysis::TraceToBatches(*trace, batching);
      if (!batches.ok()) {
        std::fprintf(stderr, "request_breakdown_bench: %s: %s\n", path.c_str(),
                     std::string(batches.status().message()).c_str());
        return 2;
      }
      session_batches = std::move(*batches);
      kernels = static_cast<int64_t>(trace->gpu_events.size());
    }
    int64_t requests = 0;
    for (int r = 0; r < reps; ++r) {
      const Clock::time_point t0 = Clock::now();
      absl::StatusOr<opmap::analysis::Trace> trace = Load(path, bytes);
      if (!trace.ok()) {
        std::fprintf(stderr, "request_breakdown_bench: %s: %s\n", path.c_str(),
                     std::string(trace.status().message()).c_str());
        return 2;
      }
      const opmap::analysis::MappingResult mapping = opmap::analysis::MapGpuEvents(*trace);
      const Clock::time_point t1 = Clock::now();
      const opmap::analysis::TraceSummary s = opmap::analysis::Summarize(*trace, mapping);
      const Clock::time_point t2 = Clock::now();
      // What Summarize computes once for its sections and lends the breakdown: not its cost.
      int64_t threads = 0;
      std::vector<uint32_t> order;
      const std::vector<int32_t> parent = opmap::analysis::RangeParents(*trace, &threads, &order);
      const opmap::analysis::ModuleAttribution modules =
          opmap::analysis::AttributeModules(*trace, order);
      const Clock::time_point t2b = Clock::now();
      opmap::analysis::RequestBreakdownAccumulator acc;
      acc.Add(*trace, mapping, nullptr, parent, order, modules);
      const opmap::analysis::RequestTailSummary tail = opmap::analysis::ExplainTails(
          acc.Finish([](std::string_view) { return opmap::analysis::LayerType::kOther; }));
      const Clock::time_point t3 = Clock::now();
      requests = tail.requests;
      (void)s;
      best_analyze = std::min(best_analyze, Seconds(t0, t2));
      best_summary = std::min(best_summary, Seconds(t1, t2));
      best_breakdown = std::min(best_breakdown, Seconds(t2b, t3));
    }
    // Summarize includes the breakdown once: analyze without it is analyze - breakdown.
    const double ratio = best_breakdown / std::max(1e-9, best_analyze - best_breakdown);
    std::string collector_cpu = "-", collector_share = "-";
    if (flags.collector_sessions > 0) {
      // Enough sessions for ~1 M records (about a CPU-second): /proc counts CPU in 10 ms
      // ticks, which a few sessions of a small trace would not fill.
      int64_t records = 0;
      for (const opmap::v1::Batch& b : session_batches) {
        records += opmap::analysis::EventRecordCount(b);
      }
      const int64_t sessions = std::clamp<int64_t>(1'000'000 / std::max<int64_t>(records, 1),
                                                   flags.collector_sessions, 10'000);
      absl::StatusOr<CollectorCost> cost = MeasureCollector(session_batches, kernels, sessions);
      if (!cost.ok()) {
        std::fprintf(stderr, "request_breakdown_bench: %s: the collector: %s\n", path.c_str(),
                     std::string(cost.status().message()).c_str());
        return 1;
      }
      const double share = cost->breakdown_s / std::max(1e-9, cost->cpu_s - cost->breakdown_s);
      if (requests > 0) worst_collector = std::max(worst_collector, share);
      collector_cpu = absl::StrFormat("%.4f", cost->cpu_s);
      collector_share = absl::StrFormat("%.1f%%", 100 * share);
    }
    const std::string name = std::filesystem::path(path).filename().string();
    if (bytes.size() >= largest_bytes) {
      largest_bytes = bytes.size();
      largest_ratio = ratio;
      largest_name = name;
    }
    table.Add({name, absl::StrCat(kernels), absl::StrCat(requests),
               absl::StrFormat("%.4f", best_analyze), absl::StrFormat("%.4f", best_summary),
               absl::StrFormat("%.4f", best_breakdown), absl::StrFormat("%.1f%%", 100 * ratio),
               collector_cpu, collector_share});
  }
  std::fputs(table.Render().c_str(), stdout);
  std::printf("share of analyze on the largest trace (%s): %.1f%% [%s]\n", largest_name.c_str(),
              100 * largest_ratio, largest_ratio <= 0.10 ? "ok" : "MISSED");
  if (flags.collector_sessions > 0) {
    std::printf("largest share of a real collector's CPU per session (SQLite, loopback, its own "
                "breakdown counter; traces with requests): %.1f%% [%s]\n",
                100 * worst_collector, worst_collector <= 0.10 ? "ok" : "MISSED");
  }
  return 0;
}
