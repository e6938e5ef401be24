// The recommendation as JSON (the machine-readable contract, fields in README.md) and as
// display sections and plots for the Markdown/HTML renderers.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/release/release_internal.h"
#include "analysis/release/release_tail.h"

namespace opmap::analysis {
namespace {

using namespace release_internal;

void OptionalDouble(text::JsonWriter& w, std::string_view key, std::optional<double> v,
                    int decimals = 3) {
  w.Key(key);
  if (v) {
    w.Double(*v, decimals);
  } else {
    w.Null();
  }
}

void OptionalMs(text::JsonWriter& w, std::string_view key, std::optional<double> ns) {
  OptionalDouble(w, key, ns ? std::optional<double>(*ns / 1e6) : std::nullopt, 6);
}

void ArmJson(text::JsonWriter& w, const Arm& a) {
  w.BeginObject();
  w.Field("arm", ArmName(a));
  w.Field("key", a.key);
  w.Field("revision", a.revision);
  w.Field("requests", static_cast<int64_t>(a.requests));
  w.Field("latency_samples", static_cast<int64_t>(SampleCount(a.latencies_ns)));
  w.Field("relative_accuracy", a.relative_accuracy, 6);
  OptionalMs(w, "p50_ms", a.p50_ns);
  OptionalMs(w, "p95_ms", a.p95_ns);
  OptionalMs(w, "p99_ms", a.p99_ns);
  OptionalDouble(w, "throughput_rps", a.throughput_rps);
  OptionalDouble(w, "gpu_watts", a.gpu_watts);
  OptionalDouble(w, "requests_per_joule", a.requests_per_joule, 6);
  OptionalDouble(w, "tokens_per_joule", a.tokens_per_joule, 6);
  OptionalDouble(w, "flops_per_joule", a.flops_per_joule, 0);
  OptionalDouble(w, "mfu_per_watt", a.mfu_per_watt, 9);
  w.Key("windows").BeginArray();
  for (const ArmWindow& win : a.windows) {
    w.BeginObject();
    w.Field("id", win.id).Field("start_ns", win.start_ns).Field("end_ns", win.end_ns);
    w.Field("requests", static_cast<int64_t>(win.requests));
    OptionalMs(w, "p50_ms", win.p50_ns);
    OptionalMs(w, "p95_ms", win.p95_ns);
    OptionalMs(w, "p99_ms", win.p99_ns);
    OptionalDouble(w, "throughput_rps", WindowThroughput(win));
    OptionalDouble(w, "gpu_watts", win.gpu_watts);
    OptionalDouble(w, "requests_per_joule", win.requests_per_joule, 6);
    OptionalDouble(w, "mfu_per_watt", win.mfu_per_watt, 9);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void TestJson(text::JsonWriter& w, const std::optional<MannWhitneyResult>& t) {
  w.Key("test");
  if (!t) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Field("name", "mann_whitney_u");
  w.Field("u", t->u_candidate, 1).Field("z", t->z, 4);
  // Fixed decimals: a p below 1e-10 prints 0; z carries its magnitude.
  w.Field("p", t->p_value, 10).Field("effect", t->effect, 4);
  w.Key("n").BeginObject();
  w.Field("baseline", static_cast<int64_t>(t->n_baseline));
  w.Field("candidate", static_cast<int64_t>(t->n_candidate));
  w.EndObject();
  w.EndObject();
}

std::string Cell(std::optional<double> v, int decimals = 2) {
  return v ? absl::StrFormat("%.*f", decimals, *v) : std::string("—");
}

std::string ChangeCell(const ValidationRow& row) {
  if (!row.change) return "—";
  // Relative for latency, throughput and MFU; points for shares and rates; absolute for quality.
  if (row.metric == "quality") return absl::StrFormat("%+.4g", *row.change);
  if (row.unit == "%" && row.metric != "MFU") return absl::StrFormat("%+.2f pt", *row.change);
  return SignedPercent(*row.change);
}

DocPlot LatencyOverTime(const ReleaseInputs& in) {
  DocPlot plot;
  plot.id = "plot-latency-over-time";
  plot.title = "latency percentiles over time";
  plot.kind = PlotKind::kLine;
  plot.x_label = "window start (s since the first window)";
  plot.y_label = "latency (ms)";
  const int64_t origin = FirstWindowStart(in);
  bool any = false;
  for (const auto& [arm_name, arm] :
       {std::pair<const char*, const Arm*>{"baseline", &in.baseline}, {"candidate", &in.candidate}}) {
    for (const auto& [pct, field] : {std::pair<const char*, std::optional<double> ArmWindow::*>{
                                         "p50", &ArmWindow::p50_ns},
                                     {"p95", &ArmWindow::p95_ns},
                                     {"p99", &ArmWindow::p99_ns}}) {
      PlotSeries s;
      s.name = absl::StrCat(arm_name, " ", pct);
      s.connect = true;
      for (const ArmWindow& w : arm->windows) {
        if (!(w.*field)) continue;
        s.points.push_back({static_cast<double>(w.start_ns - origin) * 1e-9, *(w.*field) / 1e6,
                            w.id});
      }
      any = any || !s.points.empty();
      plot.series.push_back(std::move(s));
    }
  }
  if (in.profile && in.profile->sla_p99_ms) {
    plot.lines.push_back({absl::StrFormat("SLA p99 %g ms", *in.profile->sla_p99_ms), std::nullopt,
                          *in.profile->sla_p99_ms});
  }
  if (!any) plot.unavailable = "no window has latency percentiles";
  return plot;
}

DocPlot LatencyThroughput(const ReleaseInputs& in) {
  DocPlot plot;
  plot.id = "plot-latency-throughput";
  plot.title = "latency–throughput";
  plot.kind = PlotKind::kScatter;
  plot.x_label = "throughput (req/s)";
  plot.y_label = "p99 latency (ms)";
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& [arm_name, arm] :
       {std::pair<const char*, const Arm*>{"baseline", &in.baseline}, {"candidate", &in.candidate}}) {
    PlotSeries s;
    s.name = arm_name;
    for (const ArmWindow& w : arm->windows) {
      const std::optional<double> rps = WindowThroughput(w);
      if (!rps || !w.p99_ns) continue;
      s.points.push_back({*rps, *w.p99_ns / 1e6, w.id});
      lo = std::min(lo, *rps);
      hi = std::max(hi, *rps);
    }
    plot.series.push_back(std::move(s));
  }
  if (hi <= 0) {
    plot.unavailable = "no window has both a throughput and a p99";
  } else if (hi <= lo * (1 + kLoadTolerance)) {
    // One load level: the scatter would be a vertical smear, not a curve.
    plot.unavailable = absl::StrFormat(
        "all windows ran at the same load within %.0f%% (%.2f–%.2f req/s)", kLoadTolerance * 100,
        lo, hi);
  }
  return plot;
}

}  // namespace

void WriteRecommendationJson(const ReleaseInputs& in, const Recommendation& r, text::JsonWriter& w) {
  w.BeginObject();
  w.Field("verdict", VerdictName(r.verdict));
  w.Key("reasons").BeginArray();
  for (const std::string& s : r.reasons) w.String(s);
  w.EndArray();
  w.Key("rejected").BeginArray();
  for (const std::string& s : r.rejected) w.String(s);
  w.EndArray();
  w.Key("criteria").BeginObject();
  w.Field("min_samples", in.min_samples).Field("hold_windows", in.hold_windows);
  w.Field("alpha", in.alpha, 4);
  w.Field("p99_regression_threshold",
          std::max(kMinLatencyRegression,
                   2 * std::max(in.baseline.relative_accuracy, in.candidate.relative_accuracy)),
          4);
  w.EndObject();
  w.Key("matrix").BeginArray();
  for (const ValidationRow& row : r.matrix) {
    w.BeginObject();
    w.Field("metric", row.metric).Field("unit", row.unit);
    OptionalDouble(w, "baseline", row.baseline, 6);
    OptionalDouble(w, "candidate", row.candidate, 6);
    OptionalDouble(w, "change", row.change, 6);
    w.Field("criterion", row.criterion);
    w.Field("status", RowStatusName(row.status)).Field("reason", row.reason);
    w.Key("required").Bool(row.required);
    TestJson(w, row.test);
    w.EndObject();
  }
  w.EndArray();
  w.Key("triggers").BeginArray();
  for (const Trigger& t : r.triggers) {
    w.BeginObject();
    w.Field("name", t.name).Field("rule", t.rule);
    w.Key("evaluable").Bool(t.evaluable);
    w.Key("fired").Bool(t.fired);
    w.Field("windows_held", t.windows_held);
    w.Key("held").Bool(t.held);
    w.Field("evidence", t.evidence).Field("layer", t.layer).Field("owner", t.owner);
    w.EndObject();
  }
  w.EndArray();
  w.Key("layer_deltas").BeginArray();
  for (const LayerTime& d : r.layer_deltas) {
    const LayerTime* b = FindLayer(in.baseline, d.layer);
    const LayerTime* k = FindLayer(in.candidate, d.layer);
    w.BeginObject();
    w.Field("layer", d.layer).Field("top_operator", d.top_operator);
    w.Field("baseline_ns_per_request", b ? b->ns_per_request : 0.0, 1);
    w.Field("candidate_ns_per_request", k ? k->ns_per_request : 0.0, 1);
    w.Field("delta_ns_per_request", d.ns_per_request, 1);
    OptionalDouble(w, "delta_p99_ns", d.p99_ns, 1);
    w.Field("top_operator_ns_per_request", d.top_operator_ns_per_request, 1);
    w.EndObject();
  }
  w.EndArray();
  w.Key("baseline");
  ArmJson(w, in.baseline);
  w.Key("candidate");
  ArmJson(w, in.candidate);
  w.Key("inputs").BeginObject();
  for (const auto& [k, v] : r.inputs) w.Field(k, v);
  w.EndObject();
  WriteTailGrowthJson(in, w);
  w.Key("unavailable").BeginObject();
  for (const auto& [k, v] : in.baseline.unavailable) w.Field("baseline." + k, v);
  for (const auto& [k, v] : in.candidate.unavailable) w.Field("candidate." + k, v);
  w.EndObject();
  w.EndObject();
}

std::vector<DocSection> RecommendationSections(const ReleaseInputs& in, const Recommendation& r) {
  std::vector<DocSection> out;

  DocSection verdict;
  verdict.heading = "Release recommendation";
  verdict.facts = {{"verdict", std::string(VerdictName(r.verdict))},
                   {"baseline", ArmName(in.baseline)},
                   {"candidate", ArmName(in.candidate)},
                   {"criteria", absl::StrFormat("≥ %d samples per arm, triggers hold after %d "
                                                "consecutive windows, Mann–Whitney U p < %g",
                                                in.min_samples, in.hold_windows, in.alpha)}};
  for (const std::string& s : r.reasons) verdict.paragraphs.push_back(s);
  for (const std::string& s : r.rejected) verdict.paragraphs.push_back("Rejected — " + s);
  out.push_back(std::move(verdict));

  DocSection matrix;
  matrix.heading = "Validation matrix";
  DocTable t;
  t.columns = {"metric", "baseline", "candidate", "unit", "change", "criterion",
               "Mann–Whitney U", "status", "reason"};
  t.align_right = {false, true, true, false, true, false, false, false, false};
  for (const ValidationRow& row : r.matrix) {
    const std::string test =
        row.test ? absl::StrFormat("p = %.3g, effect %.3f, n = %d/%d", row.test->p_value,
                                   row.test->effect, row.test->n_baseline, row.test->n_candidate)
                 : std::string("—");
    t.rows.push_back({row.metric, Cell(row.baseline), Cell(row.candidate), row.unit,
                      ChangeCell(row), row.criterion, test,
                      absl::StrCat(std::string(RowStatusName(row.status)), row.required ? " (required)" : ""),
                      row.reason});
  }
  matrix.tables.push_back(std::move(t));
  out.push_back(std::move(matrix));

  DocSection triggers;
  triggers.heading = "Rollback triggers";
  DocTable tt;
  tt.columns = {"trigger", "rule", "state", "windows held", "owner", "evidence"};
  tt.align_right = {false, false, false, true, false, false};
  for (const Trigger& tr : r.triggers) {
    const char* state = !tr.evaluable ? "not evaluable"
                        : tr.held     ? "held"
                        : tr.fired    ? "fired"
                                      : "quiet";
    tt.rows.push_back({tr.name, tr.rule, state, absl::StrCat(tr.windows_held), tr.owner,
                       tr.evidence});
  }
  triggers.tables.push_back(std::move(tt));
  out.push_back(std::move(triggers));

  DocSection layers;
  layers.heading = "Layer deltas";
  if (r.layer_deltas.empty()) {
    layers.paragraphs.push_back("unavailable: no per-layer times in either arm");
  } else {
    DocTable lt;
    lt.columns = {"layer", "baseline ms/request", "candidate ms/request", "change ms/request",
                  "top operator (candidate)", "top operator ms/request"};
    lt.align_right = {false, true, true, true, false, true};
    for (const LayerTime& d : r.layer_deltas) {
      const LayerTime* b = FindLayer(in.baseline, d.layer);
      const LayerTime* k = FindLayer(in.candidate, d.layer);
      lt.rows.push_back({d.layer, absl::StrFormat("%.3f", b ? b->ns_per_request / 1e6 : 0.0),
                         absl::StrFormat("%.3f", k ? k->ns_per_request / 1e6 : 0.0),
                         absl::StrFormat("%+.3f", d.ns_per_request / 1e6), d.top_operator,
                         absl::StrFormat("%.3f", d.top_operator_ns_per_request / 1e6)});
    }
    layers.tables.push_back(std::move(lt));
  }
  out.push_back(std::move(layers));
  out.push_back(TailGrowthSection(in));

  DocSection plots;
  plots.heading = "Latency";
  plots.plots.push_back(LatencyOverTime(in));
  plots.plots.push_back(LatencyThroughput(in));
  out.push_back(std::move(plots));

  DocSection power;
  power.heading = "Perf per watt";
  power.plots.push_back(PerfPerWattOverTime(in));
  out.push_back(std::move(power));

  DocSection inputs;
  inputs.heading = "Inputs";
  for (const auto& [k, v] : r.inputs) inputs.facts.emplace_back(k, v);
  for (const auto& [k, v] : in.baseline.unavailable) {
    inputs.facts.emplace_back("baseline unavailable: " + k, v);
  }
  for (const auto& [k, v] : in.candidate.unavailable) {
    inputs.facts.emplace_back("candidate unavailable: " + k, v);
  }
  out.push_back(std::move(inputs));
  return out;
}

}  // namespace opmap::analysis
