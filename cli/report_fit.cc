#include "cli/report_fit.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analysis/release/risk_map.h"
#include "cli/report_marker.h"
#include "common/text/json_writer.h"
#include "analysis/handoff/handoff_report.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/trace_summary.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "cli/trace_loader.h"
#include "common/base/status_macros.h"

namespace opmap::cli {
namespace {

// The class holding most of each layer type's GPU time, with the layer type's evidence.
std::vector<analysis::LayerBottleneckSummary> Summaries(const analysis::HandoffReport& report) {
  std::vector<analysis::LayerBottleneckSummary> out;
  for (const analysis::LayerBottleneck& l : report.layer_types) {
    analysis::LayerBottleneckSummary s;
    s.layer_type = l.figures.name;
    s.gpu_time_ns = l.figures.gpu_time_ns;
    int64_t total = 0, best = 0;
    size_t best_class = static_cast<size_t>(l.classification.cls);
    for (size_t c = 0; c < l.class_time_ns.size(); ++c) {
      total += l.class_time_ns[c];
      if (l.class_time_ns[c] > best) {
        best = l.class_time_ns[c];
        best_class = c;
      }
    }
    s.cls = total > 0 ? static_cast<analysis::BottleneckClass>(best_class) : l.classification.cls;
    if (total > 0) s.share_of_layer = static_cast<double>(best) / static_cast<double>(total);
    s.evidence = l.classification.summary;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<analysis::FitArm> FetchFitArm(CollectorChannel& client, const ArmQuery& q) {
  ASSIGN_OR_RETURN(FetchedArm fetched, FetchArm(client, q));
  analysis::FitArm fit;
  fit.arm = std::move(fetched.arm);
  fit.envelope = std::move(fetched.envelope);
  fit.envelope_source = std::move(fetched.envelope_source);

  opmap::v1::ExportTraceRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.set_max_events(kFitMaxEvents);
  bool truncated = false;
  ASSIGN_OR_RETURN(std::string doc, ExportTraceJson(client, req, &truncated));
  absl::StatusOr<analysis::Trace> trace = LoadTraceBytes(std::move(doc));
  if (!trace.ok()) {
    fit.layers_unavailable = absl::StrCat("no layer classes: the arm's exported trace: ", trace.status().message());
    return fit;
  }
  const analysis::MappingResult mapping = analysis::MapGpuEvents(*trace);
  const analysis::TraceSummary summary = analysis::Summarize(*trace, mapping);
  analysis::HandoffOptions options;
  options.source = analysis::ArmName(fit.arm);
  options.envelope = fit.envelope ? &*fit.envelope : nullptr;
  options.envelope_source = fit.envelope_source;
  options.profile = q.profile;
  const analysis::HandoffReport report = analysis::BuildHandoff(*trace, mapping, summary, options);
  fit.layers = Summaries(report);
  if (fit.layers.empty()) {
    fit.layers_unavailable = "the arm's windows hold no GPU kernels";
  } else if (truncated) {
    for (analysis::LayerBottleneckSummary& l : fit.layers) {
      absl::StrAppend(&l.evidence, absl::StrFormat(" (from the first %d events of the arm)", kFitMaxEvents));
    }
  }
  return fit;
}

FitReport RenderFitReport(const analysis::FitInputs& in, const std::string& key, ReportFormat format) {
  const analysis::FitResult fit = analysis::BuildFit(in);
  const std::vector<analysis::Risk> risks = analysis::FitRisks(in, fit);
  FitReport out;
  out.best = fit.best ? fit.rows[*fit.best].arm : "none";
  std::vector<std::string> names;
  for (const analysis::FitArm& a : in.arms) names.push_back(a.arm.revision);

  analysis::ReportDocument doc;
  doc.title = absl::StrCat("Workload fit by ", key);
  doc.header = {{"best", out.best},
                {"runner-up", fit.runner_up ? fit.rows[*fit.runner_up].arm : "none"},
                {"arms", absl::StrJoin(names, ", ")},
                {"generated", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone())}};
  if (in.profile != nullptr) {
    doc.header.push_back({"power budget", in.profile->power_budget_w
                                              ? absl::StrFormat("%g W per replica", *in.profile->power_budget_w)
                                              : std::string("not given (power_budget_w)")});
  }
  doc.sections = analysis::FitSections(in, fit);
  doc.sections.push_back(analysis::RiskMapSection(risks));
  analysis::DocSection inputs;
  inputs.heading = "Inputs";
  for (const analysis::FitArm& a : in.arms) {
    const std::string name = analysis::ArmName(a.arm);
    inputs.facts.emplace_back(name + " envelope source", a.envelope_source.empty() ? "none" : a.envelope_source);
    for (const auto& [k, v] : a.arm.inputs) inputs.facts.emplace_back(name + " " + k, v);
    for (const auto& [k, v] : a.arm.unavailable) inputs.facts.emplace_back(name + " unavailable: " + k, v);
  }
  doc.sections.push_back(std::move(inputs));

  text::JsonWriter w;
  w.BeginObject();
  w.Field("key", key);
  w.Key("fit");
  analysis::WriteFitJson(in, fit, w);
  w.Key("risks");
  analysis::WriteRisksJson(risks, w);
  w.Key("arms").BeginArray();
  for (const analysis::FitArm& a : in.arms) {
    w.BeginObject();
    w.Field("arm", analysis::ArmName(a.arm)).Field("envelope", a.envelope_source);
    w.Key("inputs").BeginObject();
    for (const auto& [k, v] : a.arm.inputs) w.Field(k, v);
    w.EndObject();
    w.Key("unavailable").BeginObject();
    for (const auto& [k, v] : a.arm.unavailable) w.Field(k, v);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  const ReportMarker marker{"fit", key, absl::StrJoin(names, ","), out.best};
  out.text = RenderReport(format, doc, w.str(), marker);
  return out;
}

}  // namespace opmap::cli
