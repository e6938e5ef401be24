// Rollback triggers (docs/metrics.md "Release recommendation"). Each window-based trigger is
// evaluated per candidate window against the whole baseline arm, and holds when it fires
// in ≥ hold_windows consecutive candidate windows: one bad window is noise or a transient,
// a run of them is the revision. Quality is a property of the revision, not of a window.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis::release_internal {
namespace {

}  // namespace

// Fills windows_held / fired / held from the per-window results and the arm-level result.
void Settle(Trigger& t, const Context& c, bool arm_fired, const std::vector<bool>& windows) {
  t.windows_held = LongestRun(windows);
  t.fired = arm_fired || t.windows_held > 0;
  t.held = t.windows_held >= c.hold_windows;
  int count = 0;
  for (bool w : windows) count += w;
  absl::StrAppend(&t.evidence,
                  absl::StrFormat("; fired in %d of %d candidate windows (longest run %d, "
                                  "holds at %d)",
                                  count, windows.size(), t.windows_held, c.hold_windows));
}

// The triggers' name for MissingBoth.
namespace {

std::string Unevaluable(const ReleaseInputs& in, bool base_missing, bool cand_missing,
                        std::initializer_list<std::string_view> keys, std::string_view figure) {
  return MissingBoth(in, base_missing, cand_missing, keys, figure);
}

Trigger P99Trigger(const Context& c, const std::vector<LayerTime>& deltas) {
  const ReleaseInputs& in = *c.in;
  Trigger t;
  t.name = std::string(kP99Trigger);
  t.owner = std::string(OwnerRoleName(kRuntimeOwner));
  t.rule = absl::StrFormat(
      "candidate window p99 > baseline p99 by more than max(5%%, 2α) = %.1f%%, and "
      "Mann–Whitney U over the arms p < %g with the candidate larger; holds after %d "
      "consecutive windows",
      c.latency_threshold * 100, in.alpha, c.hold_windows);
  const auto& b = in.baseline.p99_ns;
  const auto& k = in.candidate.p99_ns;
  if (!b || !k || *b <= 0) {
    t.evaluable = false;
    t.evidence = Unevaluable(in, !b, !k, {"p99", "latency"}, "p99");
    if (b && *b <= 0) t.evidence = "baseline p99 is 0";
    return t;
  }
  if (!c.samples_ok || !c.test) {
    t.evaluable = false;
    t.evidence = c.samples_ok ? c.test_error : c.samples_text;
    return t;
  }
  const bool significant = c.test->p_value < in.alpha && c.test->z > 0;
  const double change = *k / *b - 1;
  std::vector<bool> windows;
  for (const ArmWindow& w : in.candidate.windows) {
    windows.push_back(significant && w.p99_ns && *w.p99_ns / *b - 1 > c.latency_threshold);
  }
  t.evidence = absl::StrFormat(
      "p99 %s vs baseline %s (%s, threshold %.1f%%); Mann–Whitney U p = %.3g, z = %.2f, "
      "effect %.3f, n = %d/%d",
      Ms(*k), Ms(*b), SignedPercent(change), c.latency_threshold * 100, c.test->p_value,
      c.test->z, c.test->effect, c.test->n_baseline, c.test->n_candidate);
  Settle(t, c, significant && change > c.latency_threshold, windows);
  if (!t.fired) return t;
  // Name the layer whose time per request grew most.
  if (deltas.empty() || deltas.front().ns_per_request <= 0) {
    absl::StrAppend(&t.evidence, in.baseline.layers.empty() || in.candidate.layers.empty()
                                     ? "; no per-layer times to name the layer"
                                     : "; no layer's time per request increased");
    return t;
  }
  const LayerTime& d = deltas.front();
  const LayerTime* bl = FindLayer(in.baseline, d.layer);
  const LayerTime* kl = FindLayer(in.candidate, d.layer);
  t.layer = d.layer;
  absl::StrAppend(&t.evidence,
                  absl::StrFormat("; layer %s: %s → %s per request (+%s)", d.layer,
                                  Ms(bl ? bl->ns_per_request : 0),
                                  Ms(kl ? kl->ns_per_request : 0), Ms(d.ns_per_request)));
  if (!d.top_operator.empty()) {
    absl::StrAppend(&t.evidence, absl::StrFormat(", top operator %s (%s per request)",
                                                 d.top_operator,
                                                 Ms(d.top_operator_ns_per_request)));
  }
  return t;
}

Trigger MfuTrigger(const Context& c) {
  const ReleaseInputs& in = *c.in;
  Trigger t;
  t.name = std::string(kMfuTrigger);
  t.owner = std::string(OwnerRoleName(kCompilerOwner));
  t.rule = absl::StrFormat(
      "candidate window MFU < baseline MFU by more than %.0f%% (relative) at equal load "
      "(throughput within %.0f%%); holds after %d consecutive windows",
      kMfuDrop * 100, kLoadTolerance * 100, c.hold_windows);
  const MfuBasis basis = ChooseMfuBasis(in.baseline, in.candidate);
  if (basis == MfuBasis::kNone) {
    t.evaluable = false;
    const bool b = in.baseline.mfu || in.baseline.achieved_flops_per_s;
    const bool k = in.candidate.mfu || in.candidate.achieved_flops_per_s;
    t.evidence = (b && k) ? "one arm has MFU and the other only achieved FLOP/s"
                          : Unevaluable(in, !b, !k, {"mfu", "achieved_flops_per_s"}, "MFU");
    return t;
  }
  const double b = *MfuFigure(basis, in.baseline), k = *MfuFigure(basis, in.candidate);
  if (b <= 0) {
    t.evaluable = false;
    t.evidence = absl::StrCat("baseline ", std::string(MfuBasisText(basis)), " is 0");
    return t;
  }
  const std::optional<double> base_load = in.baseline.throughput_rps;
  std::vector<bool> windows;
  int other_load = 0;
  for (const ArmWindow& w : in.candidate.windows) {
    const std::optional<double> f = MfuFigure(basis, w);
    const bool same = SameLoad(WindowThroughput(w), base_load);
    other_load += !same;
    windows.push_back(same && f && *f / b - 1 < -kMfuDrop);
  }
  const bool arm_same = SameLoad(in.baseline.throughput_rps, in.candidate.throughput_rps);
  const double change = k / b - 1;
  t.evidence = basis == MfuBasis::kMfu
                   ? absl::StrFormat("MFU %.1f%% vs baseline %.1f%% (%s, basis: mfu)", k * 100,
                                     b * 100, SignedPercent(change))
                   : std::max(b, k) >= 1e12
                         ? absl::StrFormat(
                               "achieved %.1f vs baseline %.1f TFLOP/s (%s, basis: "
                               "achieved_flops_per_s, no MFU peak in an arm)",
                               k * 1e-12, b * 1e-12, SignedPercent(change))
                         : absl::StrFormat(
                               "achieved %.2f vs baseline %.2f GFLOP/s (%s, basis: "
                               "achieved_flops_per_s, no MFU peak in an arm)",
                               k * 1e-9, b * 1e-9, SignedPercent(change));
  if (!arm_same) absl::StrAppend(&t.evidence, "; the arms ran at different loads");
  if (other_load > 0) {
    absl::StrAppend(&t.evidence, "; ", other_load,
                    " candidate window(s) at a different load not counted");
  }
  if (!base_load) absl::StrAppend(&t.evidence, "; load not compared (no baseline throughput)");
  Settle(t, c, arm_same && change < -kMfuDrop, windows);
  return t;
}

Trigger StallTrigger(const Context& c) {
  const ReleaseInputs& in = *c.in;
  Trigger t;
  t.name = std::string(kStallTrigger);
  t.owner = std::string(OwnerRoleName(kCompilerOwner));
  t.rule = absl::StrFormat(
      "candidate window memory-stall share > baseline by more than %.0f points; holds after "
      "%d consecutive windows",
      kStallRise * 100, c.hold_windows);
  const auto& b = in.baseline.memory_stall_share;
  const auto& k = in.candidate.memory_stall_share;
  if (!b || !k) {
    t.evaluable = false;
    t.evidence = Unevaluable(in, !b, !k, {"memory_stall_share"}, "memory-stall share");
    return t;
  }
  std::vector<bool> windows;
  for (const ArmWindow& w : in.candidate.windows) {
    windows.push_back(w.memory_stall_share && *w.memory_stall_share - *b > kStallRise);
  }
  t.evidence = absl::StrFormat("memory-stall share %.1f%% vs baseline %.1f%% (%+.1f points)",
                               *k * 100, *b * 100, (*k - *b) * 100);
  Settle(t, c, *k - *b > kStallRise, windows);
  return t;
}

Trigger ErrorsTrigger(const Context& c) {
  const ReleaseInputs& in = *c.in;
  Trigger t;
  t.name = std::string(kErrorsTrigger);
  t.owner = std::string(OwnerRoleName(kRuntimeOwner));
  t.rule = absl::StrFormat(
      "candidate window error rate > baseline error rate; holds after %d consecutive windows",
      c.hold_windows);
  const auto b = ErrorRate(in.baseline.errors, in.baseline.requests);
  const auto k = ErrorRate(in.candidate.errors, in.candidate.requests);
  if (!b || !k) {
    t.evaluable = false;
    t.evidence = Unevaluable(in, !b, !k, {"errors"}, "error count (or no requests)");
    return t;
  }
  std::vector<bool> windows;
  for (const ArmWindow& w : in.candidate.windows) {
    const auto r = ErrorRate(w.errors, w.requests);
    windows.push_back(r && *r > *b);
  }
  t.evidence = absl::StrFormat("error rate %.3f%% (%d/%d) vs baseline %.3f%% (%d/%d)", *k * 100,
                               *in.candidate.errors, in.candidate.requests, *b * 100,
                               *in.baseline.errors, in.baseline.requests);
  Settle(t, c, *k > *b, windows);
  return t;
}

Trigger QualityTrigger(const Context& c) {
  const ReleaseInputs& in = *c.in;
  const WorkloadProfile* p = in.profile;
  Trigger t;
  t.name = std::string(kQualityTrigger);
  t.owner = std::string(OwnerRoleName(kModelingOwner));
  t.rule = "candidate quality.<REV> beyond the profile's quality_threshold (measured per "
           "revision, not per window: holds when it fires)";
  if (!p || !p->quality_threshold) {
    t.evaluable = false;
    t.evidence = !p ? "no workload profile" : "the workload profile has no quality_threshold";
    return t;
  }
  const std::string rev = ProfileRevision(in.candidate);
  auto it = p->quality.find(rev);
  if (it == p->quality.end()) {
    t.evaluable = false;
    t.evidence = absl::StrCat("no quality.", rev, " in the workload profile");
    return t;
  }
  const double q = it->second, th = *p->quality_threshold;
  const bool below = p->quality_higher_is_better ? q < th : q > th;
  const std::string metric = p->quality_metric.empty() ? "quality" : p->quality_metric;
  t.evidence = absl::StrFormat("%s of %s = %g, threshold %s %g", metric, rev,
                               q, p->quality_higher_is_better ? "≥" : "≤", th);
  if (c.model_changed) absl::StrAppend(&t.evidence, " (", c.model_change_text, ")");
  t.fired = below;
  t.held = below;
  return t;
}

}  // namespace

std::vector<Trigger> EvaluateTriggers(const Context& c, const std::vector<LayerTime>& deltas) {
  return {P99Trigger(c, deltas), MfuTrigger(c), StallTrigger(c), PerfPerWattTrigger(c),
          QualityTrigger(c), ErrorsTrigger(c)};
}

}  // namespace opmap::analysis::release_internal
