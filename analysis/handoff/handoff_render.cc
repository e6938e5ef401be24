// HandoffDocument and HandoffJson: the handoff packet as report sections (Markdown /
// HTML) and as one JSON object. Missing figures print as "unavailable: <reason>" (null in
// JSON), never 0.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/bottleneck/evidence_format.h"
#include "analysis/handoff/handoff_report.h"
#include "analysis/report/tail_report.h"
#include "common/text/json_writer.h"
#include "common/text/units.h"

namespace opmap::analysis {
namespace {

using bottleneck_format::OptionalDouble;

std::string Pct(std::optional<double> v, const std::string& why) {
  return v ? absl::StrFormat("%.3f%%", *v * 100) : "unavailable: " + why;
}
std::string Us(int64_t ns) { return text::Micros(static_cast<double>(ns)); }
std::string Flops(double f) { return absl::StrFormat("%.4g", f); }
std::string PrecisionText(const std::optional<Precision>& p, const std::string& source) {
  return p ? std::string(PrecisionName(*p)) + " (" + source + ")" : "unknown";
}

DocSection SummarySection(const HandoffReport& r, const TraceSummary& s, const HandoffOptions& o) {
  DocSection d;
  d.heading = "Summary";
  d.facts.push_back({"trace", o.source});
  if (!o.opmap_version.empty()) d.facts.push_back({"opmap version", o.opmap_version});
  d.facts.push_back({"format", s.info.format});
  std::string gpus;
  for (const std::string& g : s.info.gpu_names) gpus += (gpus.empty() ? "" : ", ") + g;
  d.facts.push_back({"GPUs", gpus.empty() ? "none named" : gpus});
  d.facts.push_back({"hardware envelope", o.envelope ? o.envelope->name + " (" + o.envelope_source + ")"
                                                     : "none: " + r.mfu.unavailable});
  d.facts.push_back({"workload profile", o.profile ? o.profile_source : "none"});
  d.facts.push_back({"GPU time (summed)", s.gpu_event_count > 0
                                              ? Us(s.gpu_time_ns) + " µs"
                                              : "unavailable: the trace has no GPU events"});
  d.facts.push_back({"requests / iterations", std::to_string(r.mfu.requests.size())});
  d.facts.push_back({"MFU over requests (FLOPs from shapes)",
                     Pct(r.mfu.mfu_over_requests,
                         r.mfu.requests.empty() ? "no request or iteration ranges"
                         : !r.mfu.unavailable.empty() ? r.mfu.unavailable
                                                      : "an operator inside has FLOPs without a peak")});
  d.facts.push_back({"MFU over requests (workload profile)", Pct(r.profile_mfu.mfu, r.profile_mfu.basis)});
  d.facts.push_back({"MBU (decode)", Pct(r.profile_mfu.mbu, r.profile_mfu.mbu_basis)});
  d.paragraphs.push_back("MFU convention: " + r.mfu.convention);
  if (r.profile_mfu.flops_per_request) {
    d.paragraphs.push_back("Workload-profile FLOPs: " + r.profile_mfu.basis);
  }
  if (r.profile_mfu.mbu) d.paragraphs.push_back("MBU: " + r.profile_mfu.mbu_basis);
  return d;
}

DocSection MfuSection(const HandoffReport& r, int top) {
  DocSection d;
  d.heading = "MFU by operator";
  DocTable t;
  t.columns = {"operator", "instances", "FLOPs", "GPU time µs", "achieved TFLOP/s", "MFU",
               "precision", "FLOPs from"};
  t.align_right = {false, true, true, true, true, true, false, false};
  int n = 0;
  for (const OperatorMfuRow& o : r.mfu.operators) {
    if (n++ >= top) break;
    t.rows.push_back({o.name, std::to_string(o.instances),
                      o.instances_with_flops ? Flops(o.flops) : "unavailable",
                      Us(o.gpu_time_ns),
                      o.achieved_flops_per_s ? absl::StrFormat("%.4g", *o.achieved_flops_per_s * 1e-12)
                                             : "unavailable",
                      o.mfu                        ? absl::StrFormat("%.3f%%", *o.mfu * 100)
                      : o.instances_with_flops == 0 ? std::string("unavailable (no FLOPs)")
                                                    : "unavailable: " + o.unavailable,
                      PrecisionText(o.precision, o.precision_source), o.formula});
  }
  if (r.mfu.gpu_time_ns > 0) {
    t.notes.push_back(absl::StrFormat(
        "%.1f%% of the operators' GPU time has a FLOPs figure; the rest adds no FLOPs.",
        100.0 * static_cast<double>(r.mfu.gpu_time_with_flops_ns) /
            static_cast<double>(r.mfu.gpu_time_ns)));
  } else {
    t.notes.push_back("unavailable: no operator owns GPU events in this trace");
  }
  if (static_cast<int>(r.mfu.operators.size()) > top) {
    t.notes.push_back(absl::StrFormat("%d more operators in the JSON report",
                                      r.mfu.operators.size() - top));
  }
  d.tables.push_back(std::move(t));
  return d;
}

DocSection StallSection(const StallSummary& s) {
  DocSection d;
  d.heading = "Memory-stall fraction by layer type";
  if (!s.unavailable.empty() || s.layer_types.empty()) {
    d.paragraphs.push_back("unavailable: " + (s.unavailable.empty() ? std::string("no stall samples")
                                                                     : s.unavailable));
    return d;
  }
  DocTable t;
  t.columns = {"layer type", "kernels", "memory-stall fraction", "on-chip share"};
  t.align_right = {false, true, true, true};
  for (const LayerTypeStallStats& l : s.layer_types) {
    auto frac = [](std::optional<double> v) { return v ? absl::StrFormat("%.3f", *v) : std::string("unavailable: nothing stalled"); };
    t.rows.push_back({std::string(LayerTypeName(l.layer_type)), std::to_string(l.kernels),
                      frac(l.breakdown.MemoryFraction()), frac(l.breakdown.OnChipFraction())});
  }
  t.notes.push_back("unit: " + std::string(StallUnitName(s.unit)) + "; weighted by samples");
  d.tables.push_back(std::move(t));
  return d;
}

DocSection BottleneckSection(const HandoffReport& r, int top) {
  DocSection d;
  d.heading = "Bottleneck class";
  DocTable layers;
  layers.title = "By layer type";
  layers.columns = {"layer type", "GPU time µs", "class", "expected", "evidence"};
  layers.align_right = {false, true, false, false, false};
  for (const LayerBottleneck& l : r.layer_types) {
    layers.rows.push_back({l.figures.name, Us(l.figures.gpu_time_ns),
                           std::string(BottleneckClassName(l.classification.cls)),
                           std::string(BottleneckClassName(l.expected)),
                           l.classification.summary});
  }
  d.tables.push_back(std::move(layers));
  DocTable ops;
  ops.title = "By operator";
  ops.columns = {"operator", "GPU time µs", "class", "expected", "evidence"};
  ops.align_right = {false, true, false, false, false};
  int n = 0;
  for (const SheetOperator& o : r.sheet.operators) {
    if (n++ >= top) break;
    ops.rows.push_back({o.name, Us(o.gpu_time_ns), std::string(BottleneckClassName(o.observed.cls)),
                        std::string(BottleneckClassName(o.expected)), o.observed.summary});
  }
  d.tables.push_back(std::move(ops));
  return d;
}

// One colour per bottleneck class, the same in every plot.
const char* ClassColor(BottleneckClass c) {
  switch (c) {
    case BottleneckClass::kCommunication: return "#8c564b";
    case BottleneckClass::kHostStarved: return "#7f7f7f";
    case BottleneckClass::kLaunchOverhead: return "#e377c2";
    case BottleneckClass::kComputeBound: return "#d62728";
    case BottleneckClass::kMemoryBound: return "#1f77b4";
    case BottleneckClass::kLatencyOccupancy: return "#ff7f0e";
    case BottleneckClass::kUnclassified: return "#bcbd22";
  }
  return "#000000";
}

// Every roofline group: x intensity, y achieved FLOP/s, area ∝ GPU time, colour = observed
// class, the label its shape; one roofline and ridge per (path, precision) present.
DocPlot RooflinePlot(const HandoffReport& r, const HardwareEnvelope* env) {
  DocPlot roof;
  roof.id = "plot-roofline";
  roof.title = "Roofline by operator group: achieved FLOP/s vs arithmetic intensity (area ∝ GPU time)";
  roof.kind = PlotKind::kScatter;
  roof.x_label = "FLOP / byte";
  roof.y_label = "FLOP/s";
  roof.log_x = roof.log_y = true;
  std::map<BottleneckClass, PlotSeries> by_class;
  std::map<std::pair<bool, Precision>, bool> paths;  // (vector, precision) present
  for (const SheetGroup& g : r.sheet.groups) {
    if (!g.observed.intensity || !g.achieved_flops_per_s || *g.observed.intensity <= 0 ||
        *g.achieved_flops_per_s <= 0) {
      continue;
    }
    PlotSeries& series = by_class[g.observed.cls];
    PlotPoint p;
    p.x = *g.observed.intensity;
    p.y = *g.achieved_flops_per_s;
    p.size = static_cast<double>(g.gpu_time_ns);
    p.label = absl::StrCat(g.op, " ", g.input_dims, " ", g.input_type, ": ",
                           std::string(BottleneckClassName(g.observed.cls)), ", ",
                           Us(g.gpu_time_ns), " µs");
    series.points.push_back(std::move(p));
    paths[{g.figures.vector_path, g.figures.precision}] = true;
  }
  for (auto& [cls, series] : by_class) {
    series.name = std::string(BottleneckClassName(cls));
    series.color = ClassColor(cls);
    roof.series.push_back(std::move(series));
  }
  if (roof.series.empty()) {
    roof.unavailable = "no operator group has both FLOPs and bytes";
    roof.series.emplace_back();
  }
  if (env != nullptr && env->hbm_bytes_per_s > 0) {
    for (const auto& [key, present] : paths) {
      const auto [vector, precision] = key;
      const auto peak = vector ? env->VectorPeakFlopsPerS(precision) : env->PeakFlopsPerS(precision);
      if (!peak) continue;
      const std::string what = absl::StrCat(vector ? "vector " : "tensor-core ",
                                            std::string(PrecisionName(precision)));
      PlotLine line;
      line.name = absl::StrCat(env->name, " ", what, " roofline");
      line.slope = env->hbm_bytes_per_s;
      line.cap = *peak;
      roof.lines.push_back(line);
      PlotLine ridge;
      ridge.name = absl::StrFormat("ridge %s %.3g FLOP/B", what, *peak / env->hbm_bytes_per_s);
      ridge.x = *peak / env->hbm_bytes_per_s;
      roof.lines.push_back(std::move(ridge));
    }
  }
  return roof;
}

// Per layer type, the share of its GPU time in each observed class (from its groups).
DocPlot ClassSharePlot(const HandoffReport& r) {
  DocPlot plot;
  plot.id = "plot-class-share";
  plot.title = "GPU time share by bottleneck class per layer type";
  plot.kind = PlotKind::kStackedBar;
  plot.x_label = "layer type";
  plot.y_label = "share of the layer type's GPU time";
  for (int c = 0; c < 7; ++c) {
    const auto cls = static_cast<BottleneckClass>(c);
    PlotSeries series;
    series.name = std::string(BottleneckClassName(cls));
    series.color = ClassColor(cls);
    for (const LayerBottleneck& l : r.layer_types) {
      if (l.figures.gpu_time_ns <= 0 || l.class_time_ns[c] <= 0) continue;
      series.points.push_back({0, static_cast<double>(l.class_time_ns[c]) / l.figures.gpu_time_ns,
                               l.figures.name});
    }
    if (!series.points.empty()) plot.series.push_back(std::move(series));
  }
  if (plot.series.empty()) {
    plot.unavailable = "the trace has no GPU events mapped to operators";
    plot.series.emplace_back();
  }
  return plot;
}

DocSection PlotSection(const HandoffReport& r, const TraceSummary& s, const HandoffOptions& o) {
  DocSection d;
  d.heading = "Plots";
  DocPlot layers;
  layers.id = "plot-layer-time";
  layers.title = "GPU time by layer type (ms)";
  layers.kind = PlotKind::kBar;
  layers.x_label = "layer type";
  layers.y_label = "ms";
  PlotSeries bars;
  bars.name = "GPU time";
  for (const LayerTypeStats& l : s.layer_types) {
    bars.points.push_back({0, static_cast<double>(l.gpu_time_ns) / 1e6, std::string(LayerTypeName(l.layer_type))});
  }
  if (bars.points.empty()) layers.unavailable = "the trace has no GPU events";
  layers.series.push_back(std::move(bars));
  d.plots.push_back(std::move(layers));

  d.plots.push_back(RooflinePlot(r, o.envelope));
  d.plots.push_back(ClassSharePlot(r));
  return d;
}

void WriteMfuJson(const HandoffReport& r, text::JsonWriter& w) {
  w.Key("mfu").BeginObject();
  w.Field("convention", r.mfu.convention).Field("envelope", r.mfu.envelope_name);
  if (r.mfu.unavailable.empty()) w.Key("unavailable").Null(); else w.Field("unavailable", r.mfu.unavailable);
  OptionalDouble(w, "mfu_over_requests", r.mfu.mfu_over_requests);
  w.Field("flops", r.mfu.flops, 0).Field("gpu_time_ns", r.mfu.gpu_time_ns)
      .Field("gpu_time_with_flops_ns", r.mfu.gpu_time_with_flops_ns);
  w.Key("operators").BeginArray();
  for (const OperatorMfuRow& o : r.mfu.operators) {
    w.BeginObject().Field("name", o.name).Field("instances", o.instances)
        .Field("instances_with_flops", o.instances_with_flops);
    OptionalDouble(w, "flops", o.instances_with_flops ? std::optional<double>(o.flops) : std::nullopt, 0);
    w.Field("gpu_time_ns", o.gpu_time_ns).Field("gpu_time_with_flops_ns", o.gpu_time_with_flops_ns);
    OptionalDouble(w, "achieved_flops_per_s", o.achieved_flops_per_s, 0);
    OptionalDouble(w, "mfu", o.mfu, 8);
    w.Key("precision");
    if (o.precision) w.String(PrecisionName(*o.precision)); else w.Null();
    w.Field("precision_source", o.precision_source).Field("formula", o.formula)
        .Field("unavailable", o.unavailable);
    w.EndObject();
  }
  w.EndArray();
  w.Key("requests").BeginArray();
  for (const RequestMfuRow& q : r.mfu.requests) {
    w.BeginObject().Field("name", q.name).Field("start_ns", q.start_ns).Field("dur_ns", q.dur_ns)
        .Field("flops", q.flops, 0).Field("gpu_time_ns", q.gpu_time_ns);
    OptionalDouble(w, "mfu", q.mfu, 8);
    w.EndObject();
  }
  w.EndArray().EndObject();
  w.Key("profile_mfu").BeginObject();
  OptionalDouble(w, "flops_per_request", r.profile_mfu.flops_per_request, 0);
  w.Field("basis", r.profile_mfu.basis);
  OptionalDouble(w, "mfu", r.profile_mfu.mfu, 8);
  OptionalDouble(w, "mbu", r.profile_mfu.mbu, 8);
  w.Field("mbu_basis", r.profile_mfu.mbu_basis);
  w.EndObject();
}

}  // namespace

ReportDocument HandoffDocument(const HandoffReport& r, const TraceSummary& s,
                               const HandoffOptions& o) {
  ReportDocument doc;
  doc.title = "Handoff report: " + o.source;
  doc.header = {{"trace", o.source},
                {"envelope", o.envelope ? o.envelope->name : "none"},
                {"profile", o.profile ? o.profile_source : "none"}};
  doc.sections.push_back(SummarySection(r, s, o));
  doc.sections.push_back(PlotSection(r, s, o));
  doc.sections.push_back(MfuSection(r, o.top));
  doc.sections.push_back(StallSection(r.stalls));
  doc.sections.push_back(BottleneckSection(r, o.top));
  doc.sections.push_back(MappingSheetSection(r.sheet, o.top));
  DocSection mitigations = MitigationsSection(r.mitigations);
  mitigations.paragraphs.push_back("Gain bounds are fractions of the " + r.total_basis + ".");
  doc.sections.push_back(std::move(mitigations));
  doc.sections.push_back(TailSection(r.tail, o.top));
  return doc;
}

std::string HandoffJson(const HandoffReport& r, const HandoffOptions& o) {
  text::JsonWriter w;
  w.BeginObject().Field("trace", o.source).Field("opmap_version", o.opmap_version);
  w.Key("envelope");
  if (o.envelope) w.String(o.envelope->name); else w.Null();
  w.Field("envelope_source", o.envelope_source);
  w.Key("profile");
  if (o.profile) w.String(o.profile_source); else w.Null();
  WriteMfuJson(r, w);
  w.Key("stalls_by_layer_type").BeginObject();
  w.Field("unavailable", r.stalls.unavailable);
  w.Key("layer_types").BeginArray();
  for (const LayerTypeStallStats& l : r.stalls.layer_types) {
    w.BeginObject().Field("layer_type", LayerTypeName(l.layer_type)).Field("kernels", l.kernels);
    OptionalDouble(w, "memory_stall_fraction", l.breakdown.MemoryFraction());
    OptionalDouble(w, "on_chip_fraction", l.breakdown.OnChipFraction());
    w.EndObject();
  }
  w.EndArray().EndObject();
  w.Key("bottlenecks_by_layer_type").BeginArray();
  for (const LayerBottleneck& l : r.layer_types) {
    w.BeginObject().Field("layer_type", l.figures.name).Field("gpu_time_ns", l.figures.gpu_time_ns)
        .Field("expected", BottleneckClassName(l.expected));
    w.Key("class_gpu_time_ns").BeginObject();
    for (int c = 0; c < 7; ++c) {
      if (l.class_time_ns[c] > 0) {
        w.Field(BottleneckClassName(static_cast<BottleneckClass>(c)), l.class_time_ns[c]);
      }
    }
    w.EndObject();
    w.Key("classification");
    bottleneck_format::WriteClassificationJson(l.classification, w);
    w.EndObject();
  }
  w.EndArray();
  w.Key("mapping_sheet");
  WriteMappingSheetJson(r.sheet, w);
  w.Key("mitigations");
  WriteMitigationsJson(r.mitigations, w);
  w.Field("gain_total_ns", r.total_ns).Field("gain_total_basis", r.total_basis);
  // Host time by operator shape and module type: what a capture without GPU events
  // still says (summary/host_tables.h); the top rows of each.
  w.Key("host").BeginObject();
  w.Key("operators").BeginArray();
  for (size_t i = 0; i < r.host.operators.size() && i < static_cast<size_t>(o.top); ++i) {
    const HostOperatorShape& op = r.host.operators[i];
    w.BeginObject().Field("name", op.name).Field("input_dims", op.input_dims)
        .Field("count", op.count).Field("host_time_ns", op.total_ns).EndObject();
  }
  w.EndArray();
  w.Field("operator_shapes", static_cast<int64_t>(r.host.operators.size()));
  w.Key("module_types").BeginArray();
  for (size_t i = 0; i < r.host.module_types.size() && i < static_cast<size_t>(o.top); ++i) {
    const HostModuleType& t = r.host.module_types[i];
    w.BeginObject().Field("module_type", t.module_type).Field("modules", t.modules)
        .Field("count", t.count).Field("host_time_ns", t.total_ns).EndObject();
  }
  w.EndArray();
  w.Field("module_type_count", static_cast<int64_t>(r.host.module_types.size()));
  w.EndObject();
  TailJson(w, r.tail, o.top);
  w.EndObject();
  return w.Take();
}

}  // namespace opmap::analysis
