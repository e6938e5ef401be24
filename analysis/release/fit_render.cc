// The fit matrix as JSON (fields in README.md) and as report sections with the curves.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/bottleneck/evidence_format.h"
#include "analysis/release/fit_matrix.h"
#include "analysis/release/release_internal.h"
#include "analysis/release/risk_map.h"

namespace opmap::analysis {
namespace {


std::optional<double> ToMs(std::optional<double> ns) {
  return ns ? std::optional<double>(*ns / 1e6) : std::nullopt;
}

std::string FitCell(std::optional<double> v, int decimals = 2) {
  return v ? absl::StrFormat("%.*f", decimals, *v) : std::string("—");
}

void PointJson(text::JsonWriter& w, const LoadPoint& p) {
  w.BeginObject();
  w.Field("window", p.window).Field("start_ns", p.start_ns);
  w.Field("requests", static_cast<int64_t>(p.requests));
  w.Field("throughput_rps", p.throughput_rps, 3);
  bottleneck_format::OptionalDouble(w, "p50_ms", ToMs(p.p50_ns), 6);
  bottleneck_format::OptionalDouble(w, "p95_ms", ToMs(p.p95_ns), 6);
  bottleneck_format::OptionalDouble(w, "p99_ms", ToMs(p.p99_ns), 6);
  bottleneck_format::OptionalDouble(w, "gpu_watts", p.gpu_watts, 3);
  bottleneck_format::OptionalDouble(w, "requests_per_joule", p.requests_per_joule, 6);
  w.Key("meets_sla").Bool(p.meets_sla);
  w.EndObject();
}

std::string LayersCell(const FitRow& r) {
  if (r.layers.empty()) return "unavailable: " + r.layers_unavailable;
  std::vector<std::string> parts;
  for (const LayerBottleneckSummary& l : r.layers) {
    parts.push_back(l.share_of_layer
                        ? absl::StrFormat("%s: %s (%.0f%% of its GPU time)", l.layer_type,
                                          BottleneckClassName(l.cls), *l.share_of_layer * 100)
                        : absl::StrFormat("%s: %s", l.layer_type, BottleneckClassName(l.cls)));
  }
  return absl::StrJoin(parts, "; ");
}

// The arm's risks of the risk map, as "kind: subject".
std::vector<std::string> OpenRisks(const std::vector<Risk>& risks, const std::string& arm) {
  std::vector<std::string> out;
  for (const Risk& k : risks) {
    if (k.arm == arm) out.push_back(k.kind + ": " + k.subject);
  }
  return out;
}

DocPlot CurvesPlot(const FitInputs& in, const FitResult& fit) {
  DocPlot plot;
  plot.id = "plot-load-curves";
  plot.title = "latency–throughput curve per arm (knee: highest throughput meeting the SLA)";
  plot.kind = PlotKind::kScatter;
  plot.x_label = "throughput (req/s)";
  plot.y_label = "p99 latency (ms)";
  bool any = false;
  for (const FitRow& r : fit.rows) {
    PlotSeries s;
    s.name = r.arm + " p99";
    s.connect = true;
    for (const LoadPoint& p : r.curve.points) {
      s.points.push_back({p.throughput_rps, *p.p99_ns / 1e6, p.window});
    }
    any = any || !s.points.empty();
    plot.series.push_back(std::move(s));
    if (r.curve.knee) {
      const LoadPoint& k = r.curve.points[*r.curve.knee];
      PlotSeries knee;
      knee.name = "knee " + r.arm;
      knee.points.push_back({k.throughput_rps, *k.p99_ns / 1e6,
                             absl::StrFormat("knee %s: %.1f req/s, p99 %.2f ms", r.arm,
                                             k.throughput_rps, *k.p99_ns / 1e6),
                             4});
      plot.series.push_back(std::move(knee));
    }
  }
  if (in.profile && in.profile->sla_p99_ms) {
    plot.lines.push_back({absl::StrFormat("SLA p99 %g ms", *in.profile->sla_p99_ms), std::nullopt,
                          *in.profile->sla_p99_ms});
  }
  if (!any) plot.unavailable = "no window of any arm has a duration and a p99";
  return plot;
}

}  // namespace

void WriteFitJson(const FitInputs& in, const FitResult& fit, text::JsonWriter& w) {
  const std::vector<Risk> risks = FitRisks(in, fit);  // listed in full by the risk map
  w.BeginObject();
  w.Key("best");
  if (fit.best) {
    w.String(fit.rows[*fit.best].arm);
  } else {
    w.Null();
  }
  w.Key("runner_up");
  if (fit.runner_up) {
    w.String(fit.rows[*fit.runner_up].arm);
  } else {
    w.Null();
  }
  w.Field("best_reason", fit.best_reason);
  w.Key("rejected").BeginArray();
  for (const std::string& s : fit.rejected) w.String(s);
  w.EndArray();
  w.Key("criteria").BeginObject();
  const WorkloadProfile* p = in.profile;
  bottleneck_format::OptionalDouble(w, "sla_p99_ms", p ? p->sla_p99_ms : std::nullopt, 3);
  bottleneck_format::OptionalDouble(w, "sla_p95_ms", p ? p->sla_p95_ms : std::nullopt, 3);
  bottleneck_format::OptionalDouble(w, "sla_p50_ms", p ? p->sla_p50_ms : std::nullopt, 3);
  bottleneck_format::OptionalDouble(w, "throughput_target", p ? p->throughput_target : std::nullopt, 3);
  bottleneck_format::OptionalDouble(w, "power_budget_w", p ? p->power_budget_w : std::nullopt, 3);
  w.EndObject();
  w.Key("rows").BeginArray();
  for (const FitRow& r : fit.rows) {
    w.BeginObject();
    w.Field("arm", r.arm);
    w.Field("verdict", FitVerdictName(r.verdict)).Field("verdict_reason", r.verdict_reason);
    bottleneck_format::OptionalDouble(w, "knee_rps", r.knee_rps, 3);
    if (!r.knee_rps) w.Field("knee_unavailable", r.curve.knee_unavailable);
    bottleneck_format::OptionalDouble(w, "p50_ms", ToMs(r.p50_ns), 6);
    bottleneck_format::OptionalDouble(w, "p95_ms", ToMs(r.p95_ns), 6);
    bottleneck_format::OptionalDouble(w, "p99_ms", ToMs(r.p99_ns), 6);
    bottleneck_format::OptionalDouble(w, "mfu", r.mfu, 6);
    w.Field("mfu_basis", r.mfu_basis);
    bottleneck_format::OptionalDouble(w, "mfu_per_watt", r.mfu_per_watt, 9);
    bottleneck_format::OptionalDouble(w, "mbu", r.mbu, 6);
    w.Field("mbu_basis", r.mbu_basis);
    bottleneck_format::OptionalDouble(w, "gpu_watts", r.gpu_watts, 3);
    bottleneck_format::OptionalDouble(w, "requests_per_joule", r.requests_per_joule, 6);
    if (!r.power_unavailable.empty()) w.Field("power_unavailable", r.power_unavailable);
    w.Field("mitigation", r.mitigation).Field("mitigation_owner", r.mitigation_owner);
    w.Key("layers").BeginArray();
    for (const LayerBottleneckSummary& l : r.layers) {
      w.BeginObject();
      w.Field("layer_type", l.layer_type).Field("class", BottleneckClassName(l.cls));
      w.Field("gpu_time_ns", l.gpu_time_ns);
      bottleneck_format::OptionalDouble(w, "share_of_layer", l.share_of_layer, 4);
      w.Field("evidence", l.evidence);
      w.EndObject();
    }
    w.EndArray();
    if (r.layers.empty()) w.Field("layers_unavailable", r.layers_unavailable);
    w.Field("open_risks", static_cast<int64_t>(OpenRisks(risks, r.arm).size()));
    w.Key("curve").BeginArray();
    for (const LoadPoint& pt : r.curve.points) PointJson(w, pt);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::vector<DocSection> FitSections(const FitInputs& in, const FitResult& fit) {
  std::vector<DocSection> out;
  DocSection verdict;
  verdict.heading = "Workload fit";
  verdict.facts.push_back({"best platform", fit.best ? fit.rows[*fit.best].arm : "none"});
  verdict.facts.push_back({"runner-up", fit.runner_up ? fit.rows[*fit.runner_up].arm : "none"});
  verdict.paragraphs.push_back(fit.best_reason);
  for (const std::string& s : fit.rejected) verdict.paragraphs.push_back("Rejected — " + s);
  out.push_back(std::move(verdict));

  DocSection matrix;
  matrix.heading = "Workload fit matrix";
  DocTable t;
  t.columns = {"arm", "verdict", "knee req/s", "p50 ms", "p95 ms", "p99 ms", "MFU %", "MBU %",
               "GPU W", "req/J", "dominant bottleneck per layer type", "open risks"};
  t.align_right = {false, false, true, true, true, true, true, true, true, true, false, true};
  // The reasons behind each cell go in a second table, so the matrix stays readable.
  DocTable why;
  why.title = "Why, per arm";
  why.columns = {"arm", "verdict", "MFU", "MBU", "power", "bottleneck evidence", "open risks"};
  const std::vector<Risk> risks = FitRisks(in, fit);
  for (const FitRow& r : fit.rows) {
    const std::vector<std::string> open = OpenRisks(risks, r.arm);
    t.rows.push_back({r.arm, std::string(FitVerdictName(r.verdict)), FitCell(r.knee_rps, 1),
                      FitCell(ToMs(r.p50_ns)), FitCell(ToMs(r.p95_ns)), FitCell(ToMs(r.p99_ns)),
                      r.mfu ? absl::StrFormat("%.2f", *r.mfu * 100) : std::string("unavailable"),
                      r.mbu ? absl::StrFormat("%.2f", *r.mbu * 100) : std::string("unavailable"),
                      r.gpu_watts ? FitCell(r.gpu_watts, 1) : std::string("unavailable"),
                      r.requests_per_joule ? FitCell(r.requests_per_joule, 4) : std::string("unavailable"),
                      r.layers.empty() ? std::string("unavailable") : LayersCell(r), absl::StrCat(open.size())});
    std::vector<std::string> evidence;
    for (const LayerBottleneckSummary& l : r.layers) evidence.push_back(l.layer_type + ": " + l.evidence);
    why.rows.push_back({r.arm, r.verdict_reason, r.mfu_basis, r.mbu_basis,
                        r.power_unavailable.empty() ? "knee window" : "unavailable: " + r.power_unavailable,
                        r.layers.empty() ? "unavailable: " + r.layers_unavailable : absl::StrJoin(evidence, "; "),
                        open.empty() ? "none" : absl::StrJoin(open, "; ")});
  }
  matrix.tables.push_back(std::move(t));
  matrix.tables.push_back(std::move(why));
  out.push_back(std::move(matrix));

  DocSection curves;
  curves.heading = "Latency–throughput curves";
  DocTable ct;
  ct.columns = {"arm", "window", "req/s", "p50 ms", "p99 ms", "req/J", "meets SLA"};
  ct.align_right = {false, false, true, true, true, true, false};
  for (const FitRow& r : fit.rows) {
    for (size_t i = 0; i < r.curve.points.size(); ++i) {
      const LoadPoint& p = r.curve.points[i];
      ct.rows.push_back({r.arm, p.window, absl::StrFormat("%.1f", p.throughput_rps),
                         FitCell(ToMs(p.p50_ns)), FitCell(ToMs(p.p99_ns)), FitCell(p.requests_per_joule, 4),
                         absl::StrCat(p.meets_sla ? "yes" : "no",
                                      r.curve.knee == i ? " (knee)" : "")});
    }
  }
  curves.tables.push_back(std::move(ct));
  curves.plots.push_back(CurvesPlot(in, fit));
  out.push_back(std::move(curves));

  DocSection power;
  power.heading = "Perf per watt per arm";
  std::vector<release_internal::NamedArm> arms;
  for (const FitArm& a : in.arms) arms.push_back({ArmName(a.arm), &a.arm});
  power.plots.push_back(release_internal::PerfPerWattPlot(arms));
  out.push_back(std::move(power));
  return out;
}

}  // namespace opmap::analysis
