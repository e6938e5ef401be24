// BuildFit (fit_matrix.h): knee figures, MBU, verdicts, the ranking and why each arm lost.
#include "analysis/release/fit_matrix.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis {
namespace {

using release_internal::kLoadTolerance;

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
  // Σ over contexts P .. P+D−1 of (weights + kv·t): closed form, so a large decode_tokens
  // costs nothing (DecodeStepBytes is affine in the context).
  const int64_t prompt = p->prefill_tokens.value_or(0);
  const double d = static_cast<double>(*p->decode_tokens);
  const double weights = DecodeStepBytes(*p, 0);
  const double kv_per_token = DecodeStepBytes(*p, 1) - weights;
  const double bytes = d * weights + kv_per_token * (d * static_cast<double>(prompt) + d * (d - 1) / 2);
  const double bandwidth = static_cast<double>(p->devices) * in.envelope->hbm_bytes_per_s;
  row.mbu = bytes * *row.knee_rps / bandwidth;
  row.mbu_basis = absl::StrFormat(
      "%.4g decode bytes per request (%d steps from context %d) × %.2f req/s ÷ (%d × %.4g B/s, %s)",
      bytes, *p->decode_tokens, prompt, *row.knee_rps, p->devices, in.envelope->hbm_bytes_per_s,
      in.envelope->name);
}

// Why the row has no perf per watt ("" when it has): the arm has no GPU power at all, or
// its knee window has none. An arm without a knee has no knee figure to miss.
std::string PowerUnavailable(const Arm& arm, const FitRow& row) {
  if (!arm.requests_per_joule) {
    auto it = arm.unavailable.find("perf_per_watt");
    return it != arm.unavailable.end() ? it->second : "no window of the arm has GPU power";
  }
  if (row.knee_rps && !row.requests_per_joule) return "the knee window has no GPU power";
  return "";
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
  // The gap is closable when the layer type that takes the most GPU time has a classified
  // bottleneck: its class names the mitigation and its owner.
  if (!row.layers.empty() && row.layers.front().cls != BottleneckClass::kUnclassified) {
    const LayerBottleneckSummary& l = row.layers.front();
    const ClassPlan plan = PlanForClass(l.cls, l.layer_type);
    row.verdict = FitVerdict::kFitsWithMitigation;
    row.mitigation = absl::StrCat(plan.action, " for ", l.layer_type, " (",
                                  std::string(BottleneckClassName(l.cls)), ")");
    row.mitigation_owner = std::string(OwnerRoleName(plan.owner));
    row.verdict_reason = absl::StrCat("meets the SLA but ", gap, "; mitigation: ", row.mitigation);
    return;
  }
  row.verdict = FitVerdict::kDoesNotFit;
  row.verdict_reason = absl::StrCat(
      gap, "; no classified bottleneck to mitigate (",
      row.layers.empty() ? row.layers_unavailable
                         : absl::StrCat(row.layers.front().layer_type, ", the most GPU time, is unclassified"),
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
    if (const ArmWindow& w = in.arm.windows[k.window_index]; w.mfu) {
      row.mfu = w.mfu;
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
  row.power_unavailable = PowerUnavailable(in.arm, row);
  // MFU per W on one basis: the knee window's, else the whole arm's.
  if (row.mfu_basis == "knee window" && row.gpu_watts && *row.gpu_watts > 0) {
    row.mfu_per_watt = *row.mfu / *row.gpu_watts;
  } else if (row.mfu && in.arm.mfu_per_watt) {
    row.mfu_per_watt = in.arm.mfu_per_watt;
  }
  SetMbu(in, profile, row);
  SetVerdict(profile, row);
  return row;
}

// Verdict first, then the higher knee (no knee last).
bool Ahead(const FitRow& a, const FitRow& b) {
  if (a.verdict != b.verdict) return a.verdict < b.verdict;
  return a.knee_rps.value_or(-1) > b.knee_rps.value_or(-1);
}

// The arms in rank order: by verdict and knee, except that the first place goes to the arm
// with the most req/J among those of the top verdict whose knee is within the load
// tolerance of the highest knee (a tie on throughput is decided by perf per watt). One
// pass over a fixed reference (the highest knee), so the order is well defined.
std::vector<size_t> Rank(const std::vector<FitRow>& rows) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return Ahead(rows[a], rows[b]); });
  if (order.empty() || !rows[order[0]].knee_rps) return order;
  size_t first = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    const FitRow& r = rows[order[k]];
    if (r.verdict != rows[order[0]].verdict || !release_internal::SameLoad(rows[order[0]].knee_rps, r.knee_rps)) break;
    if (r.requests_per_joule.value_or(-1) > rows[order[first]].requests_per_joule.value_or(-1)) first = k;
  }
  std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(first),
              order.begin() + static_cast<std::ptrdiff_t>(first) + 1);
  return order;
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
      if (t.evaluable && t.fired) fit.rows[i].triggers.push_back(t);
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
  const std::vector<size_t> order = Rank(fit.rows);
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
