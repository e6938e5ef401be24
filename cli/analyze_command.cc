#include "cli/analyze_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "analysis/import/ncu_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/report/ncu_report.h"
#include "analysis/stalls/ncu_summary.h"
#include "analysis/summary/trace_summary.h"
#include "cli/command_flags.h"
#include "cli/handoff_output.h"
#include "common/io/read_file.h"
#include "cli/analyze_stream.h"
#include "cli/capture_loader.h"
#include "cli/trace_loader.h"

namespace opmap::cli {
namespace {

constexpr char kAnalyzeUsage[] = R"(usage: opmap analyze TRACE... [--format table|json|csv] [--top N] [--launches] [--quiet]
       opmap analyze REPLAY --capture PATH [--capture PATH...] [--format ...] [--report ...]
       opmap analyze [TRACE] --ncu FILE [--ncu FILE...] [--format ...] [--top N]
       opmap analyze TRACE --report md|json|html [--output FILE] [--profile FILE]
                     [--envelope FILE | --gpu NAME] [--ncu FILE...] [--top N]

Analyzes traces offline — PyTorch-profiler (Kineto) traces (.json or .json.gz) and
Nsight Systems SQLite exports (nsys export --type sqlite) and libopmap_inject capture
files (OPMAP_CAPTURE_FILE), told apart by content: per-device time
breakdown (span/busy/idle/compute/non-compute), GPU time and p50/p95/p99 per operator,
layer type and kernel, kernel-to-operator mapping by rule, idle-time categories per
stream, CUDA launch statistics, host operator ranges by self time, and memory-stall
fractions per kernel and layer type where the source sampled warp-stall reasons.
Definitions: docs/metrics.md.

Nsight Compute CSV exports (--ncu: `ncu --csv --page raw`, `ncu --csv [--page details]`,
or a per-kernel summary with stall_<reason>_ratio columns): per kernel the duration,
memory-stall and on-chip stall fractions with the reasons present and missing, DRAM bytes,
FLOPs, arithmetic intensity and throughput %; per kernel name and layer type the fractions
weighted by kernel time. Beside one TRACE, the i-th profiled kernel of a name joins the
i-th launch of that name in the trace, and the trace's stall section shows the ratios.

options:
  --capture PATH
               a CUDA/HIP graph capture trace, or a folder of them (vLLM's
               capture_traces/, SGLang's bs_<N>_rank<R>.json.gz; its
               execution_details.json read when present); repeatable. Each graph the
               REPLAY trace launches is matched to a captured graph and its kernels take
               the operators, shapes and modules of the capture (docs/metrics.md, "Graph
               capture merge"); what matches nothing is counted with the reason on stderr.
               An Nsight export taken with --cuda-graph-trace=node needs no --capture: its
               replayed kernels are matched to the capture it holds by graph node id
  --ncu FILE   an Nsight Compute CSV export (repeatable); printed after the trace, as
               {"ncu": {...}} lines in json, an own table in csv (after a blank line)
  --format F   table (default), json (one JSON object per trace, one per line), or csv
  --top N      show the N heaviest operators and kernels (default: 20 for table, all
               for json and csv)
  --launches   json: also list every GPU event (name, grid, block, start/end ns,
               stream, correlation, the operator it was mapped to and by which rule)
  --quiet      no progress line on stderr
  --memory-budget B
               memory for exact percentiles, all rows together (default 1G; K, M, G
               suffixes): past it a row's values go into a DDSketch (±0.54%) and the
               output marks the row "ddsketch"
  -h, --help   this text

Kineto traces and Nsight Systems exports are read a part at a time (except with
--report, --launches, --ncu, --capture, or an export that recorded graph nodes): memory
stays flat whatever the size of the trace (Kineto events are sorted through a temporary
file in $TMPDIR when they pass a 24 MiB buffer; an export is queried in place, table by
table in time order), and the output's "streaming" object says how (parts, bytes
spilled, rows sketched).

handoff report (--report, one TRACE): MFU per request/iteration and per operator (FLOPs
from Input Dims or NVTX payloads; with --profile also from the workload profile, and MBU
for decode), memory-stall fraction by layer type, the bottleneck class per operator and
layer type with its evidence, the operator-to-kernel mapping sheet with fusion
candidates, and mitigations with owners and gain bounds. html is one self-contained page
with plots (per-layer time, operator roofline). Sign it with `opmap signoff FILE`.
  --report F      md, json or html
  --output FILE   write there (atomically) instead of stdout
  --profile FILE  workload profile (analysis/workload/README.md)
  --envelope FILE hardware envelope (analysis/mfu); default: the built-in one for the
                  trace's GPU (A100, H100, H200, B200), else MFU is unavailable
  --gpu NAME      a built-in envelope by name instead

exit codes: 0 ok, 2 bad usage or bad input (the message names the file and the byte
offset or event index), 1 internal error.
)";

enum class Format { kTable, kJson, kCsv };

struct AnalyzeArgs {
  std::vector<std::string> traces;
  std::vector<std::string> ncu;
  std::vector<std::string> captures;
  Format format = Format::kTable;
  int top = -1;
  bool quiet = false;
  bool launches = false;
  uint64_t memory_budget = uint64_t{1} << 30;
  HandoffArgs handoff;
};

// "512M", "1G", "65536": bytes, with binary K/M/G suffixes; at least 1 MiB.
absl::Status ParseBytes(std::string_view v, uint64_t* out) {
  uint64_t scale = 1;
  std::string digits(v);
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = uint64_t{1} << 10; break;
      case 'M': case 'm': scale = uint64_t{1} << 20; break;
      case 'G': case 'g': scale = uint64_t{1} << 30; break;
      default: scale = 0; break;
    }
    if (scale != 0) digits.pop_back(); else scale = 1;
  }
  uint64_t n = 0;
  if (digits.empty() || !absl::SimpleAtoi(digits, &n) || n > (uint64_t{1} << 50) / scale ||
      n * scale < (uint64_t{1} << 20)) {
    return absl::InvalidArgumentError(
        "needs a size of at least 1M: bytes, or a number with K, M or G (e.g. 512M, 2G)");
  }
  *out = n * scale;
  return absl::OkStatus();
}

int AnalyzeUsageError(const std::string& msg) { return UsageFailure("opmap analyze", msg); }

const FlagKeys<AnalyzeArgs>& AnalyzeKeys() {
  static const FlagKeys<AnalyzeArgs> keys = [] {
    FlagKeys<AnalyzeArgs> k = {
        {"format", false, "F", "", TableJsonCsvField(&AnalyzeArgs::format)},
        {"top", false, "N", "", IntField(&AnalyzeArgs::top, 0, 1000000)},
        {"ncu", false, "FILE", "",
         [](std::string_view v, AnalyzeArgs* a) {
           if (v.empty()) return absl::InvalidArgumentError("needs a file (an Nsight Compute CSV export)");
           a->ncu.emplace_back(v);
           return absl::OkStatus();
         }},
        {"capture", false, "PATH", "",
         [](std::string_view v, AnalyzeArgs* a) {
           if (v.empty()) return absl::InvalidArgumentError("needs a capture trace or a folder of them");
           a->captures.emplace_back(v);
           return absl::OkStatus();
         }},
        {"launches", true, "", "", SwitchField(&AnalyzeArgs::launches)},
        {"quiet", true, "", "", SwitchField(&AnalyzeArgs::quiet)},
        {"memory-budget", false, "B", "",
         [](std::string_view v, AnalyzeArgs* a) { return ParseBytes(v, &a->memory_budget); }},
    };
    AddHandoffKeys(&AnalyzeArgs::handoff, &k);
    return k;
  }();
  return keys;
}

// Prints a progress line once a file has taken over a second to parse.
class Progress {
 public:
  Progress(const std::string& file, bool enabled)
      : file_(file), enabled_(enabled), tty_(isatty(2)),
        start_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (shown_ && tty_) std::fprintf(stderr, "\n");
  }
  void Update(size_t done, size_t total) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1)) return;
    if (shown_ && !tty_ && now - last_ < std::chrono::seconds(5) && done < total) return;
    last_ = now;
    shown_ = true;
    double pct = total ? 100.0 * done / total : 100.0;
    std::fprintf(stderr, "%sopmap analyze: %s: parsed %.0f%% (%.1f of %.1f MB)%s",
                 tty_ ? "\r" : "", file_.c_str(), pct, done / 1e6, total / 1e6,
                 tty_ ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  std::string file_;
  bool enabled_, tty_, shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

void PrintSummary(const analysis::TraceSummary& summary, const std::string& path, int top,
                  const AnalyzeArgs& args, bool first) {
  analysis::ReportOptions report{path, top, args.launches};
  switch (args.format) {
    case Format::kJson:
      std::cout << analysis::RenderAnalyzeJson(summary, report) << "\n";
      break;
    case Format::kCsv:
      std::cout << analysis::RenderAnalyzeCsv(summary, report, first);
      break;
    case Format::kTable:
      if (!first) std::cout << "\n";
      std::cout << analysis::RenderAnalyzeTable(summary, report);
      break;
  }
}

}  // namespace

int RunAnalyze(const std::vector<std::string>& argv) {
  AnalyzeArgs args;
  const config::CommandShape shape{.config_file = false, .operands = true,
                                   .short_names = {{'q', "quiet"}}};
  if (std::optional<int> rc = ParseCommandFlags("opmap analyze", argv, AnalyzeKeys(), shape,
                                                kAnalyzeUsage, &args, &args.traces)) {
    return *rc;
  }
  if (args.traces.empty() && args.ncu.empty()) return AnalyzeUsageError("no trace given");
  if (!args.ncu.empty() && args.traces.size() > 1) {
    return AnalyzeUsageError("--ncu joins one trace: give at most one trace beside --ncu");
  }
  if (std::string e = HandoffFlagsWithoutReport(args.handoff); !e.empty()) return AnalyzeUsageError(e);
  if (args.handoff.report && args.traces.size() != 1) return AnalyzeUsageError("--report takes exactly one TRACE");
  if (!args.handoff.envelope_path.empty() && !args.handoff.gpu.empty()) {
    return AnalyzeUsageError("--envelope and --gpu are exclusive");
  }
  if (args.launches && args.format != Format::kJson) {
    return AnalyzeUsageError("--launches needs --format json");
  }
  if (!args.captures.empty() && args.traces.size() != 1) {
    return AnalyzeUsageError("--capture merges into one replay trace: give exactly one TRACE");
  }
  int top = args.top >= 0 ? args.top : (args.format == Format::kTable ? 20 : 0);

  // Nsight Compute exports first: bad input fails before anything is printed.
  std::vector<analysis::NcuProfile> profiles;
  for (const std::string& path : args.ncu) {
    absl::StatusOr<std::string> bytes = io::ReadFileBytes(path);
    if (!bytes.ok()) {
      std::cerr << "opmap analyze: " << path << ": " << bytes.status().message() << "\n";
      return 2;
    }
    absl::StatusOr<analysis::NcuProfile> profile = analysis::ImportNcuCsv(*bytes);
    if (!profile.ok()) {
      std::cerr << "opmap analyze: " << path << ": " << profile.status().message() << "\n";
      return 2;
    }
    profiles.push_back(std::move(*profile));
  }
  std::vector<std::optional<analysis::NcuJoin>> joins(profiles.size());

  bool first = true;
  const bool streaming =
      !args.handoff.report && !args.launches && profiles.empty() && args.captures.empty();
  for (const std::string& path : args.traces) {
    std::optional<analysis::TraceSummary> streamed;
    if (streaming && StreamableTrace(path)) {
      Progress progress(path, !args.quiet);
      StreamAnalyzeOptions options;
      options.memory_budget_bytes = args.memory_budget;
      options.progress = [&](size_t done, size_t total) { progress.Update(done, total); };
      absl::StatusOr<analysis::TraceSummary> s = StreamAnalyzeFile(path, options);
      if (!s.ok()) {
        std::cerr << "opmap analyze: " << path << ": " << s.status().message() << "\n";
        return 2;
      }
      streamed = std::move(*s);
    }
    if (streamed) {
      PrintSummary(*streamed, path, top, args, first);
      first = false;
      continue;
    }
    absl::StatusOr<std::string> bytes = io::ReadFileBytes(path);
    if (!bytes.ok()) {
      std::cerr << "opmap analyze: " << path << ": " << bytes.status().message() << "\n";
      return 2;
    }
    Progress progress(path, !args.quiet);
    LoadOptions options;
    options.progress = [&](size_t done, size_t total) { progress.Update(done, total); };
    absl::StatusOr<analysis::Trace> trace = LoadTraceBytes(std::move(*bytes), options);
    if (!trace.ok()) {
      std::cerr << "opmap analyze: " << path << ": " << trace.status().message() << "\n";
      return 2;
    }
    if (!trace->graph_nodes.empty()) MergeGraphNodeIds(*trace, "opmap analyze", args.quiet);
    if (!args.captures.empty()) {
      absl::StatusOr<analysis::CaptureMergeReport> merged =
          MergeCaptureFiles(args.captures, *trace, "opmap analyze", args.quiet);
      if (!merged.ok()) {
        std::cerr << "opmap analyze: " << merged.status().message() << "\n";
        return 2;
      }
    }
    for (size_t i = 0; i < profiles.size(); ++i) {
      joins[i] = analysis::AttachNcuStalls(profiles[i], *trace);
      if (!args.quiet) {
        std::cerr << absl::StrFormat(
            "opmap analyze: %s: %d of %d profiled kernels joined to %s by name and launch "
            "order (%d unjoined); %d trace kernel launches not profiled\n",
            args.ncu[i], joins[i]->joined, joins[i]->ncu_kernels, path, joins[i]->ncu_unjoined,
            joins[i]->trace_kernels_unprofiled);
      }
    }
    analysis::MappingResult mapping = analysis::MapGpuEvents(*trace);
    analysis::TraceSummary summary =
        analysis::Summarize(*trace, mapping, {.list_launches = args.launches});
    if (args.handoff.report) {
      args.handoff.top = args.top >= 0 ? args.top : 20;
      return WriteHandoff(args.handoff, path, *trace, mapping, summary);
    }
    PrintSummary(summary, path, top, args, first);
    first = false;
  }
  bool ncu_first = true;
  for (size_t i = 0; i < profiles.size(); ++i) {
    analysis::NcuSummary summary = analysis::SummarizeNcu(profiles[i]);
    analysis::NcuReportOptions report{args.ncu[i], top, {}, joins[i]};
    if (joins[i]) report.joined_trace = args.traces.front();
    switch (args.format) {
      case Format::kJson:
        std::cout << analysis::RenderNcuJson(summary, report) << "\n";
        break;
      case Format::kCsv:
        if (ncu_first && !first) std::cout << "\n";
        std::cout << analysis::RenderNcuCsv(summary, report, ncu_first);
        break;
      case Format::kTable:
        if (!first || !ncu_first) std::cout << "\n";
        std::cout << analysis::RenderNcuTable(summary, report);
        break;
    }
    ncu_first = false;
  }
  std::cout.flush();
  return std::cout.good() ? 0 : 1;
}

}  // namespace opmap::cli
