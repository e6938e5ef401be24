// BuildFit (fit_matrix.h): knee figures, MBU, verdicts, the ranking and why each arm lost.
#include "analysis/release/fit_matrix.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis {
namespace {

using release_internal::kLoadTolerance;

const ArmWindow* WindowById(const Arm& arm, const std::string& id) {
  for (const ArmWindow& w : arm.windows) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

// Decode bytes per request × requests/s ÷ (devices × peak bandwidth): the weights and KV
// cache each of a request's decode steps reads (DecodeStepBytes at contexts P .. P+D−1).
void SetMbu(const FitArm& in, const WorkloadProfile* p, FitRow& row) {
  if (p == nullptr) {
    row.mbu_basis = "no workload profile";
    return;
  }
  if (!p->decode_tokens) {
    row.mbu_basis = "not a decode workload (no decode_tokens in the workload profile)";
    return;
  }
  if (!in.envelope || in.envelope->hbm_bytes_per_s <= 0) {
    row.mbu_basis = in.envelope_source.empty() ? "no hardware envelope for the arm's GPU"
                                               : in.envelope_source;
    return;
  }
  if (!row.knee_rps) {
    row.mbu_basis = "no knee: " + row.curve.knee_unavailable;
    return;
  }
  const int64_t prompt = p->prefill_tokens.value_or(0);
  double bytes = 0;
  for (int64_t t = 0; t < *p->decode_tokens; ++t) bytes += DecodeStepBytes(*p, prompt + t);
  const double bandwidth = static_cast<double>(p->devices) * in.envelope->hbm_bytes_per_s;
  row.mbu = bytes * *row.knee_rps / bandwidth;
  row.mbu_basis = absl::StrFormat(
      "%.4g decode bytes per request (%d steps from context %d) × %.2f req/s ÷ (%d × %.4g B/s, %s)",
      bytes, *p->decode_tokens, prompt, *row.knee_rps, p->devices, in.envelope->hbm_bytes_per_s,
      in.envelope->name);
}

void SetVerdict(const WorkloadProfile* p, FitRow& row) {
  if (p == nullptr || !p->sla_p99_ms) {
    row.verdict = FitVerdict::kUnavailable;
    row.verdict_reason = "no sla_p99_ms in the workload profile";
    return;
  }
  if (!row.knee_rps) {
    row.verdict = FitVerdict::kDoesNotFit;
    row.verdict_reason = row.curve.knee_unavailable;
    return;
  }
  std::vector<std::string> short_of;
  if (p->throughput_target && *row.knee_rps < *p->throughput_target) {
    short_of.push_back(absl::StrFormat("knee %.1f req/s is below the throughput target %g",
                                       *row.knee_rps, *p->throughput_target));
  }
  if (p->power_budget_w && row.gpu_watts && *row.gpu_watts > *p->power_budget_w) {
    short_of.push_back(absl::StrFormat("%.1f W at the knee is over the power budget %g W",
                                       *row.gpu_watts, *p->power_budget_w));
  }
  if (short_of.empty()) {
    row.verdict = FitVerdict::kFits;
    row.verdict_reason = absl::StrFormat("p99 %.2f ms ≤ SLA %g ms at %.1f req/s", *row.p99_ns / 1e6,
                                         *p->sla_p99_ms, *row.knee_rps);
    if (p->throughput_target) absl::StrAppend(&row.verdict_reason, absl::StrFormat(" (target %g)", *p->throughput_target));
    return;
  }
  const std::string gap = absl::StrJoin(short_of, "; ");
  // The gap is closable when the layer that takes the most GPU time has a classified
  // bottleneck: its class names the mitigation and its owner.
  for (const LayerBottleneckSummary& l : row.layers) {
    if (l.cls == BottleneckClass::kUnclassified) continue;
    const ClassPlan plan = PlanForClass(l.cls, l.layer_type);
    row.verdict = FitVerdict::kFitsWithMitigation;
    row.mitigation = absl::StrCat(plan.action, " for ", l.layer_type, " (",
                                  std::string(BottleneckClassName(l.cls)), ")");
    row.mitigation_owner = std::string(OwnerRoleName(plan.owner));
    row.verdict_reason = absl::StrCat("meets the SLA but ", gap, "; mitigation: ", row.mitigation);
    return;
  }
  row.verdict = FitVerdict::kDoesNotFit;
  row.verdict_reason = absl::StrCat(gap, "; no classified bottleneck to mitigate (",
                                    row.layers_unavailable.empty() ? "every layer type unclassified"
                                                                   : row.layers_unavailable,
                                    ")");
}

FitRow MakeRow(const FitArm& in, const WorkloadProfile* profile) {
  FitRow row;
  row.arm = ArmName(in.arm);
  row.curve = BuildLoadCurve(in.arm, profile);
  row.layers = in.layers;
  row.layers_unavailable = in.layers_unavailable;
  if (row.curve.knee) {
    const LoadPoint& k = row.curve.points[*row.curve.knee];
    row.knee_rps = k.throughput_rps;
    row.p50_ns = k.p50_ns;
    row.p95_ns = k.p95_ns;
    row.p99_ns = k.p99_ns;
    row.gpu_watts = k.gpu_watts;
    row.requests_per_joule = k.requests_per_joule;
    const ArmWindow* w = WindowById(in.arm, k.window);
    if (w != nullptr && w->mfu) {
      row.mfu = w->mfu;
      row.mfu_basis = "knee window";
    }
  }
  if (!row.mfu) {
    if (in.arm.mfu) {
      row.mfu = in.arm.mfu;
      row.mfu_basis = "all windows of the arm";
    } else {
      auto it = in.arm.unavailable.find("mfu");
      row.mfu_basis = it != in.arm.unavailable.end() ? it->second : "no MFU for the arm";
    }
  }
  if (!row.requests_per_joule) {
    auto it = in.arm.unavailable.find("perf_per_watt");
    if (it != in.arm.unavailable.end()) row.risks.push_back("no GPU power: " + it->second);
  }
  if (row.mfu && row.gpu_watts && *row.gpu_watts > 0) row.mfu_per_watt = *row.mfu / *row.gpu_watts;
  SetMbu(in, profile, row);
  SetVerdict(profile, row);
  for (const LayerBottleneckSummary& l : row.layers) {
    if (l.cls == BottleneckClass::kUnclassified) {
      row.risks.push_back(absl::StrCat(l.layer_type, " unclassified: ", l.evidence));
    }
  }
  if (profile && profile->power_budget_w && row.knee_rps && !row.gpu_watts) {
    row.risks.push_back(absl::StrFormat("power budget %g W not checked: no GPU power at the knee",
                                        *profile->power_budget_w));
  }
  return row;
}

// Better first: verdict, then the knee (a higher one wins unless within the load
// tolerance), then perf per watt at the knee.
bool Better(const FitRow& a, const FitRow& b) {
  if (a.verdict != b.verdict) return a.verdict < b.verdict;
  const double ka = a.knee_rps.value_or(-1), kb = b.knee_rps.value_or(-1);
  if (!release_internal::SameLoad(ka, kb)) return ka > kb;
  const double pa = a.requests_per_joule.value_or(-1), pb = b.requests_per_joule.value_or(-1);
  if (pa != pb) return pa > pb;
  return ka > kb;
}

std::string WhyLost(const FitRow& winner, const FitRow& loser) {
  if (loser.verdict != winner.verdict) {
    return absl::StrCat(loser.arm, ": ", std::string(FitVerdictName(loser.verdict)), " (",
                        loser.verdict_reason, ") where ", winner.arm, " ",
                        std::string(FitVerdictName(winner.verdict)));
  }
  if (!loser.knee_rps) return absl::StrCat(loser.arm, ": no knee (", loser.curve.knee_unavailable, ")");
  if (!release_internal::SameLoad(winner.knee_rps, loser.knee_rps)) {
    return absl::StrFormat("%s: knee %.1f req/s against %.1f req/s for %s (%.0f%% lower)", loser.arm,
                           *loser.knee_rps, *winner.knee_rps, winner.arm,
                           (1 - *loser.knee_rps / *winner.knee_rps) * 100);
  }
  if (winner.requests_per_joule && loser.requests_per_joule) {
    return absl::StrFormat("%s: knee within %.0f%% of %s's, but %.4g req/J against %.4g", loser.arm,
                           kLoadTolerance * 100, winner.arm, *loser.requests_per_joule,
                           *winner.requests_per_joule);
  }
  return absl::StrFormat("%s: knee within %.0f%% of %s's and no perf-per-watt figure to tell them apart",
                         loser.arm, kLoadTolerance * 100, winner.arm);
}

// Each arm's rollback triggers against the best arm as the baseline.
void CompareWithBest(const FitInputs& in, FitResult& fit) {
  if (!fit.best) return;
  for (size_t i = 0; i < fit.rows.size(); ++i) {
    if (i == *fit.best) continue;
    ReleaseInputs ri;
    ri.baseline = in.arms[*fit.best].arm;
    ri.candidate = in.arms[i].arm;
    ri.profile = in.profile;
    ri.min_samples = in.min_samples;
    ri.hold_windows = in.hold_windows;
    ri.alpha = in.alpha;
    const Recommendation rec = Recommend(ri);
    for (const Trigger& t : rec.triggers) {
      if (!t.evaluable || !t.fired) continue;
      fit.rows[i].triggers.push_back(t);
      fit.rows[i].risks.push_back(absl::StrCat(t.name, t.held ? " held" : " fired", " against ",
                                               fit.rows[*fit.best].arm, ": ", t.evidence));
    }
  }
}

}  // namespace

std::string_view FitVerdictName(FitVerdict v) {
  switch (v) {
    case FitVerdict::kFits: return "fits SLA";
    case FitVerdict::kFitsWithMitigation: return "fits with mitigation";
    case FitVerdict::kDoesNotFit: return "does not fit";
    case FitVerdict::kUnavailable: break;
  }
  return "unavailable";
}

FitResult BuildFit(const FitInputs& in) {
  FitResult fit;
  for (const FitArm& a : in.arms) fit.rows.push_back(MakeRow(a, in.profile));
  std::vector<size_t> order(fit.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Better(fit.rows[a], fit.rows[b]); });
  if (order.empty()) {
    fit.best_reason = "no arms";
    return fit;
  }
  const FitRow& top = fit.rows[order[0]];
  if (top.verdict == FitVerdict::kUnavailable) {
    fit.best_reason = "no best platform: " + top.verdict_reason;
    return fit;
  }
  if (top.verdict == FitVerdict::kDoesNotFit) {
    fit.best_reason = "no platform fits: every arm misses the SLA or its targets";
    for (size_t i : order) fit.rejected.push_back(absl::StrCat(fit.rows[i].arm, ": ", fit.rows[i].verdict_reason));
    return fit;
  }
  fit.best = order[0];
  fit.best_reason = absl::StrCat(top.arm, ": ", std::string(FitVerdictName(top.verdict)), ", ",
                                 top.verdict_reason);
  if (top.requests_per_joule) {
    absl::StrAppend(&fit.best_reason, absl::StrFormat(", %.4g req/J at the knee", *top.requests_per_joule));
  }
  if (order.size() > 1) fit.runner_up = order[1];
  for (size_t k = 1; k < order.size(); ++k) fit.rejected.push_back(WhyLost(top, fit.rows[order[k]]));
  CompareWithBest(in, fit);
  return fit;
}

}  // namespace opmap::analysis
