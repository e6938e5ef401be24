#include "cli/report_command.h"

#include <iostream>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"
#include "analysis/release/release_recommendation.h"
#include "common/text/json_writer.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/query_command_parts.h"
#include "common/io/read_file.h"
#include "cli/report_arms.h"
#include "cli/report_fit.h"
#include "analysis/release/risk_map.h"
#include "absl/strings/str_split.h"
#include "cli/report_inputs.h"
#include "cli/report_output.h"
#include "cli/selection_flags.h"
#include "opmap/v1/query.grpc.pb.h"
#include "common/config/flag_config.h"

namespace opmap::cli {
namespace {

constexpr char kReportUsage[] = R"(usage: opmap report --baseline ARM --candidate ARM [--fit] [options]
       opmap report --arms KEY[=V1,V2,...] [options]

The release recommendation for the candidate arm against the baseline arm, from the
sessions a collector holds for each (same load, same window length: docs/metrics.md
"Release recommendation"): the validation matrix (p50/p95/p99 vs SLA and baseline with a
Mann-Whitney U test, throughput, MFU, memory-stall share, perf per watt, errors, quality),
rollback triggers evaluated per capture window (each must hold for --hold-windows
consecutive windows), the verdict ship / hold / rollback with its evidence and owners, the
rejected alternatives, the layer that changed most, the owner and risk map, the inputs
that reproduce it, and who signed which report of this pair (opmap signoff).

An ARM is a model revision (REV) or KEY=VALUE: the sessions whose KEY is VALUE, where KEY
is revision, host, model or any job label: OPMAP_LABELS, and the agent's own gpu_name,
power_limit_w and driver_version (docs/metrics.md "Arms").

--arms KEY compares every value of KEY in the selection (or the listed ones, two or more)
as platforms: the workload fit matrix (docs/metrics.md "Workload fit matrix"): per arm the
knee of its latency-throughput curve (the highest window throughput meeting the profile's
SLA p99), p50/p95/p99 there, MFU, MBU for decode, perf per watt, the dominant bottleneck
class per layer type with its evidence, open risks and a fit verdict; the best platform,
the runner-up and why each other arm lost; the curves with their knees; perf per watt per
arm over time; the owner and risk map.

  --baseline ARM       the arm running now (a revision, or KEY=VALUE)
  --candidate ARM      the arm to ship
  --fit                also the workload fit of the two arms
  --arms KEY[=V,...]   the workload fit across the values of KEY (two or more)
  --profile FILE       workload profile (key = value; analysis/workload/README.md): SLA,
                       throughput target, model FLOPs per request (MFU), quality per
                       revision. Without it those rows are unavailable.
  --envelope FILE      hardware envelope (key = value; analysis/mfu) for MFU, every arm
  --gpu NAME           a built-in envelope instead (docs/envelopes.md: A100, H100,
                       H100 PCIe, H100 NVL, H200, GH200, H20, L4, L40S, A10, A10G,
                       B200, GB200, MI300X, MI325X). Without either, each arm uses the
                       built-in envelope of the GPU its power rows name, when known.
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
  std::string baseline, candidate, arms, profile_path, envelope_path, gpu, output;
  bool fit = false;
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
        {"arms", false, "KEY", "", TextField(&ReportArgs::arms)},
        {"fit", true, "", "", SwitchField(&ReportArgs::fit)},
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
          "opmap report", argv, ReportKeys(),
          config::CommandShape{.config_file = false, .operands = false, .short_names = {}},
          std::string(kReportUsage) + kSelectionUsage + "\n" + kConnectionUsage, &args, nullptr)) {
    return *rc;
  }
  const bool arms_mode = !args.arms.empty();
  if (arms_mode && (!args.baseline.empty() || !args.candidate.empty())) {
    return ReportUsage("--arms and --baseline/--candidate are exclusive");
  }
  if (!arms_mode && (args.baseline.empty() || args.candidate.empty())) {
    return ReportUsage("--baseline and --candidate are required (or --arms KEY)");
  }
  if (!args.envelope_path.empty() && !args.gpu.empty()) return ReportUsage("--envelope and --gpu are exclusive");

  // The arms: selectors, each applied to the selection's filter.
  std::vector<ArmSelector> selectors;
  std::string arms_key;
  std::vector<std::string> arms_values;
  if (arms_mode) {
    const size_t eq = args.arms.find('=');
    arms_key = args.arms.substr(0, eq);
    if (arms_key.empty()) return ReportUsage("--arms: empty KEY");
    if (eq != std::string::npos) {
      std::set<std::string> seen;
      for (const std::string& v : config::SplitCommaList(args.arms.substr(eq + 1))) {
        if (!seen.insert(v).second) {
          return ReportUsage("--arms " + args.arms + ": '" + std::string(v) + "' is listed twice");
        }
        arms_values.emplace_back(v);
      }
      if (arms_values.size() < 2) return ReportUsage("--arms " + args.arms + ": list two or more values");
    }
  } else {
    for (auto [flag, text] : {std::pair{"--baseline", &args.baseline}, {"--candidate", &args.candidate}}) {
      absl::StatusOr<ArmSelector> a = ParseArmSelector(*text);
      if (!a.ok()) return ReportUsage(absl::StrCat(flag, ": ", a.status().message()));
      selectors.push_back(*a);
    }
    if (selectors[0].key == selectors[1].key && selectors[0].value == selectors[1].value) {
      return ReportUsage("--baseline and --candidate are the same arm");
    }
  }
  // Every arm's filter before any fetch: a conflict is a usage error, found up front.
  auto arm_filter = [&](const ArmSelector& sel) { return ArmFilter(args.selection.filter, sel); };
  for (const ArmSelector& sel : selectors) {
    if (absl::StatusOr<opmap::v1::Filter> f = arm_filter(sel); !f.ok()) {
      return ReportUsage(std::string(f.status().message()));
    }
  }
  if (arms_mode) {
    // A filter on the arms' key itself leaves nothing to compare.
    opmap::v1::Filter probe = args.selection.filter;
    const bool keyed = arms_key == "revision" ? !probe.revision().empty()
                       : arms_key == "host"   ? !probe.host().empty()
                       : arms_key == "model"  ? !probe.model().empty()
                                              : probe.labels().contains(arms_key);
    if (keyed) {
      return ReportUsage("--arms " + arms_key + ": the selection already fixes " + arms_key);
    }
  }

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
  auto failed = [](const absl::Status& s) {
    std::cerr << "opmap report: " << s.message() << "\n";
    return s.code() == absl::StatusCode::kUnavailable ? 1 : 2;
  };

  if (arms_mode && arms_values.empty()) {
    absl::StatusOr<std::vector<std::string>> values =
        ArmValues(**client, has_range ? &range : nullptr, args.selection.filter, arms_key);
    if (!values.ok()) return failed(values.status());
    if (values->size() < 2) {
      std::cerr << "opmap report: --arms " << arms_key << ": the selection holds "
                << values->size() << " value" << (values->size() == 1 ? " ('" + values->front() + "')" : "s")
                << " of " << arms_key << "; a fit needs two or more\n";
      return 2;
    }
    arms_values = std::move(*values);
  }
  for (const std::string& v : arms_values) selectors.push_back({arms_key, v});

  std::vector<analysis::FitArm> fetched;
  for (const ArmSelector& sel : selectors) {
    ArmQuery q;
    q.arm = sel;
    q.range = range;
    q.has_range = has_range;
    absl::StatusOr<opmap::v1::Filter> filter = arm_filter(sel);
    if (!filter.ok()) return ReportUsage(std::string(filter.status().message()));
    q.filter = std::move(*filter);
    q.profile = profile ? &*profile : nullptr;
    q.envelope = envelope ? &*envelope : nullptr;
    q.envelope_from_gpu = true;
    if (arms_mode || args.fit) {
      absl::StatusOr<analysis::FitArm> a = FetchFitArm(**client, q);
      if (!a.ok()) return failed(a.status());
      fetched.push_back(std::move(*a));
    } else {
      absl::StatusOr<FetchedArm> a = FetchArm(**client, q);
      if (!a.ok()) return failed(a.status());
      analysis::FitArm f;
      f.arm = std::move(a->arm);
      fetched.push_back(std::move(f));
    }
    if (!args.profile_path.empty()) fetched.back().arm.inputs["profile"] = args.profile_path;
  }
  analysis::FitInputs fit_inputs;
  fit_inputs.arms = std::move(fetched);
  fit_inputs.profile = profile ? &*profile : nullptr;
  fit_inputs.min_samples = args.min_samples;
  fit_inputs.hold_windows = args.hold_windows;
  fit_inputs.alpha = args.alpha;
  if (arms_mode) {
    const FitReport fit = RenderFitReport(fit_inputs, arms_key, args.format);
    if (std::string err = WriteReport(args.output, fit.text); !err.empty()) {
      std::cerr << "opmap report: " << err << "\n";
      return 2;
    }
    if (!args.output.empty()) std::cerr << "opmap report: " << args.output << ": best " << fit.best << "\n";
    return 0;
  }

  analysis::ReleaseInputs inputs;
  inputs.profile = fit_inputs.profile;
  inputs.min_samples = args.min_samples;
  inputs.hold_windows = args.hold_windows;
  inputs.alpha = args.alpha;
  inputs.baseline = fit_inputs.arms[0].arm;
  inputs.candidate = fit_inputs.arms[1].arm;
  const analysis::Recommendation rec = analysis::Recommend(inputs);
  std::vector<analysis::Risk> risks = analysis::ReleaseRisks(inputs, rec);
  std::optional<analysis::FitResult> fit;
  if (args.fit) {
    fit = analysis::BuildFit(fit_inputs);
    for (analysis::Risk& r : analysis::FitRisks(fit_inputs, *fit)) risks.push_back(std::move(r));
  }

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
  doc.title = absl::StrCat("Release recommendation: ", analysis::ArmName(inputs.candidate), " vs ",
                           analysis::ArmName(inputs.baseline));
  doc.header = {{"verdict", std::string(analysis::VerdictName(rec.verdict))},
                {"baseline", analysis::ArmName(inputs.baseline)},
                {"candidate", analysis::ArmName(inputs.candidate)},
                {"generated", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone())},
                {"collector", endpoint}};
  if (profile) doc.header.push_back({"workload profile", args.profile_path});
  doc.header.push_back({"hardware envelope",
                        envelope ? envelope->name
                                 : std::string("per arm, the built-in one of its GPU (inputs: envelope.source)")});
  doc.sections = analysis::RecommendationSections(inputs, rec);
  doc.sections.push_back(LayerTimeSection(rec));
  if (fit) {
    for (analysis::DocSection& sec : analysis::FitSections(fit_inputs, *fit)) doc.sections.push_back(std::move(sec));
  }
  doc.sections.push_back(analysis::RiskMapSection(risks));
  doc.sections.push_back(SignoffSection(signoffs));

  text::JsonWriter w;
  w.BeginObject();
  w.Key("recommendation");
  analysis::WriteRecommendationJson(inputs, rec, w);
  if (fit) {
    w.Key("fit");
    analysis::WriteFitJson(fit_inputs, *fit, w);
  }
  w.Key("risks");
  analysis::WriteRisksJson(risks, w);
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
