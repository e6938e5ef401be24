#include "cli/report_command.h"

#include <iostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/profile/workload_profile.h"
#include "analysis/release/release_recommendation.h"
#include "common/text/json_writer.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/grpc_client.h"
#include "cli/query_common.h"
#include "common/io/read_file.h"
#include "cli/report_arms.h"
#include "cli/report_inputs.h"
#include "cli/report_output.h"
#include "cli/selection_flags.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli {
namespace {

constexpr char kReportUsage[] = R"(usage: opmap report --baseline REV --candidate REV [options]

The release recommendation for model revision REV (candidate) against REV (baseline), from
the sessions a collector holds for each (same load, same window length: docs/metrics.md
"Release recommendation"): the validation matrix (p50/p95/p99 vs SLA and baseline with a
Mann-Whitney U test, throughput, MFU, memory-stall share, errors, quality), rollback
triggers evaluated per capture window (each must hold for --hold-windows consecutive
windows), the verdict ship / hold / rollback with its evidence and owners, the rejected
alternatives, the layer that changed most, the inputs that reproduce it, and who signed
which report of this pair (opmap signoff).

  --baseline REV       the revision running now
  --candidate REV      the revision to ship
  --profile FILE       workload profile (key = value; analysis/profile/README.md): SLA,
                       throughput target, model FLOPs per request (MFU), quality per
                       revision. Without it those rows are unavailable.
  --envelope FILE      hardware envelope (key = value; analysis/mfu) for MFU
  --gpu NAME           a built-in envelope instead (docs/envelopes.md: A100, H100,
                       H100 PCIe, H100 NVL, H200, GH200, H20, L4, L40S, A10, A10G,
                       B200, GB200, MI300X, MI325X)
  --format F           md (default), json or html (one self-contained page with plots)
  --output FILE        write there (atomically) instead of stdout
  --min-samples N      requests per arm below which latency rows are insufficient (50)
  --hold-windows N     consecutive candidate windows a trigger must hold (3)
  --alpha A            significance of the Mann-Whitney U test (0.05)
The verdict does not change the exit status (0 when the report was written); read it
from the output ("verdict" in JSON).
)";

int ReportUsage(const std::string& msg) { return UsageFailure("opmap report", msg); }

struct ReportArgs {
  ConnectionFlags connection;
  SelectionFlags selection;
  std::string baseline, candidate, profile_path, envelope_path, gpu, output;
  ReportFormat format = ReportFormat::kMarkdown;
  int min_samples = 50;
  int hold_windows = 3;
  double alpha = 0.05;
};

analysis::DocSection LayerTimeSection(const analysis::Recommendation& r) {
  analysis::DocSection s;
  s.heading = "Per-layer time";
  analysis::DocPlot plot;
  plot.id = "plot-layer-time";
  plot.title = "Time per request by layer (ms)";
  plot.kind = analysis::PlotKind::kBar;
  plot.x_label = "layer";
  plot.y_label = "ms per request";
  analysis::PlotSeries series;
  series.name = "candidate - baseline";
  for (const analysis::LayerTime& l : r.layer_deltas) {
    series.points.push_back({0, l.ns_per_request / 1e6, l.layer});
  }
  if (series.points.empty()) plot.unavailable = "no per-layer operator time in either arm";
  plot.title = "Change in time per request by layer, candidate - baseline (ms)";
  plot.series.push_back(std::move(series));
  s.plots.push_back(std::move(plot));
  return s;
}

analysis::DocSection SignoffSection(const std::vector<opmap::v1::Signoff>& signoffs) {
  analysis::DocSection s;
  s.heading = "Sign-offs";
  s.paragraphs.push_back(
      "Each sign-off names the SHA-256 of the report file it approved (compare with "
      "`sha256sum FILE`) and the verdict that report gave. Record one with `opmap signoff "
      "FILE --owner NAME --role ROLE`.");
  analysis::DocTable t;
  t.columns = {"owner", "role", "verdict signed", "report sha256", "signed at (UTC)", "token"};
  for (const auto& so : signoffs) {
    t.rows.push_back({so.owner(), so.role(), so.verdict(), so.report_sha256().substr(0, 16),
                      absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixNanos(so.signed_ns()),
                                       absl::UTCTimeZone()),
                      so.principal()});
  }
  if (signoffs.empty()) t.notes.push_back("no sign-offs recorded for this baseline and candidate");
  s.tables.push_back(std::move(t));
  return s;
}

const FlagKeys<ReportArgs>& ReportKeys() {
  static const FlagKeys<ReportArgs> keys = [] {
    FlagKeys<ReportArgs> k = {
        {"baseline", false, "REV", "", TextField(&ReportArgs::baseline)},
        {"candidate", false, "REV", "", TextField(&ReportArgs::candidate)},
        {"profile", false, "FILE", "", TextField(&ReportArgs::profile_path)},
        {"envelope", false, "FILE", "", TextField(&ReportArgs::envelope_path)},
        {"gpu", false, "NAME", "", TextField(&ReportArgs::gpu)},
        {"output", false, "FILE", "", TextField(&ReportArgs::output)},
        {"format", false, "F", "",
         [](std::string_view v, ReportArgs* a) {
           std::optional<ReportFormat> f = ParseReportFormat(std::string(v));
           if (!f) {
             return absl::InvalidArgumentError("'" + std::string(v) + "' (expected md, json or html)");
           }
           a->format = *f;
           return absl::OkStatus();
         }},
        {"min-samples", false, "N", "", IntField(&ReportArgs::min_samples, 1, 1000000)},
        {"hold-windows", false, "N", "", IntField(&ReportArgs::hold_windows, 1, 1000000)},
        {"alpha", false, "A", "",
         [](std::string_view v, ReportArgs* a) {
           if (!absl::SimpleAtod(std::string(v), &a->alpha) || !(a->alpha > 0 && a->alpha < 1)) {
             return absl::InvalidArgumentError("expected a number in (0, 1), got '" + std::string(v) + "'");
           }
           return absl::OkStatus();
         }},
    };
    AddConnectionKeys(&ReportArgs::connection, &k);
    AddSelectionKeys(&ReportArgs::selection, &k);
    return k;
  }();
  return keys;
}

}  // namespace

int RunReport(const std::vector<std::string>& argv) {
  ReportArgs args;
  if (std::optional<int> rc = ParseCommandFlags(
          "opmap report", argv, ReportKeys(), config::CommandShape{.config_file = false},
          std::string(kReportUsage) + kSelectionUsage + "\n" + kConnectionUsage, &args, nullptr)) {
    return *rc;
  }
  if (args.baseline.empty() || args.candidate.empty()) return ReportUsage("--baseline and --candidate are required");
  if (args.baseline == args.candidate) return ReportUsage("--baseline and --candidate are the same revision");
  if (!args.selection.filter.revision().empty()) return ReportUsage("--revision: use --baseline and --candidate");
  if (!args.envelope_path.empty() && !args.gpu.empty()) return ReportUsage("--envelope and --gpu are exclusive");

  std::optional<analysis::WorkloadProfile> profile;
  if (!args.profile_path.empty()) {
    auto p = LoadProfile(args.profile_path);
    if (!p.ok()) {
      std::cerr << "opmap report: " << p.status().message() << "\n";
      return 2;
    }
    profile = std::move(*p);
  }
  std::optional<analysis::HardwareEnvelope> envelope;
  if (!args.envelope_path.empty()) {
    auto e = LoadEnvelope(args.envelope_path);
    if (!e.ok()) {
      std::cerr << "opmap report: " << e.status().message() << "\n";
      return 2;
    }
    envelope = std::move(*e);
  } else if (!args.gpu.empty()) {
    absl::StatusOr<analysis::HardwareEnvelope> e = BuiltinEnvelope(args.gpu);
    if (!e.ok()) return ReportUsage(std::string(e.status().message()));
    envelope = std::move(*e);
  }

  opmap::v1::TimeRange range;
  bool has_range = false;
  std::string error;
  if (!MakeTimeRange(args.selection, &range, &has_range, &error)) return ReportUsage(error);
  absl::StatusOr<std::unique_ptr<CollectorChannel>> client = CollectorChannel::Create(args.connection);
  if (!client.ok()) return ReportUsage(std::string(client.status().message()));

  analysis::ReleaseInputs inputs;
  inputs.profile = profile ? &*profile : nullptr;
  inputs.min_samples = args.min_samples;
  inputs.hold_windows = args.hold_windows;
  inputs.alpha = args.alpha;
  for (auto [rev, arm] : {std::pair{&args.baseline, &inputs.baseline},
                          std::pair{&args.candidate, &inputs.candidate}}) {
    ArmQuery q;
    q.revision = *rev;
    q.range = range;
    q.has_range = has_range;
    q.filter = args.selection.filter;
    q.profile = inputs.profile;
    q.envelope = envelope ? &*envelope : nullptr;
    absl::StatusOr<analysis::Arm> fetched = FetchArm(**client, q);
    if (!fetched.ok()) {
      std::cerr << "opmap report: " << fetched.status().message() << "\n";
      return fetched.status().code() == absl::StatusCode::kUnavailable ? 1 : 2;
    }
    *arm = std::move(*fetched);
    if (!args.profile_path.empty()) arm->inputs["profile"] = args.profile_path;
  }
  const analysis::Recommendation rec = analysis::Recommend(inputs);

  opmap::v1::ListSignoffsRequest list_req;
  list_req.set_kind("release");
  list_req.set_baseline(args.baseline);
  list_req.set_candidate(args.candidate);
  opmap::v1::ListSignoffsResponse list;
  std::string endpoint;
  grpc::Status st = (*client)->CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->ListSignoffs(&ctx, list_req, &list);
      },
      &endpoint);
  if (!st.ok()) return query_internal::CallFailed(st, **client, endpoint, "opmap report");
  const std::vector<opmap::v1::Signoff> signoffs(list.signoffs().begin(), list.signoffs().end());

  analysis::ReportDocument doc;
  doc.title = absl::StrCat("Release recommendation: ", args.candidate, " vs ", args.baseline);
  doc.header = {{"verdict", std::string(analysis::VerdictName(rec.verdict))},
                {"baseline", args.baseline},
                {"candidate", args.candidate},
                {"generated", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone())},
                {"collector", endpoint}};
  if (profile) doc.header.push_back({"workload profile", args.profile_path});
  doc.header.push_back({"hardware envelope", envelope ? envelope->name : "none"});
  doc.sections = analysis::RecommendationSections(inputs, rec);
  doc.sections.push_back(LayerTimeSection(rec));
  doc.sections.push_back(SignoffSection(signoffs));

  text::JsonWriter w;
  w.BeginObject();
  w.Key("recommendation");
  analysis::WriteRecommendationJson(inputs, rec, w);
  w.Key("signoffs").BeginArray();
  for (const auto& so : signoffs) {
    w.BeginObject()
        .Field("owner", so.owner())
        .Field("role", so.role())
        .Field("verdict", so.verdict())
        .Field("report_sha256", so.report_sha256())
        .Field("signed_ns", so.signed_ns())
        .Field("principal", so.principal());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  const ReportMarker marker{"release", args.baseline, args.candidate,
                            std::string(analysis::VerdictName(rec.verdict))};
  const std::string text = RenderReport(args.format, doc, w.str(), marker);
  if (std::string err = WriteReport(args.output, text); !err.empty()) {
    std::cerr << "opmap report: " << err << "\n";
    return 2;
  }
  if (!args.output.empty()) {
    std::cerr << "opmap report: " << args.output << ": verdict " << analysis::VerdictName(rec.verdict)
              << "\n";
  }
  return 0;
}

}  // namespace opmap::cli
