// Recommend(): context, layer deltas, the verdict and its reasons. The matrix rows are in
// release_matrix.cc, the triggers in release_triggers.cc, JSON and sections in
// release_render.cc.
#include "analysis/release/release_recommendation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/release_internal.h"
#include "common/text/units.h"

namespace opmap::analysis {

std::string_view RowStatusName(RowStatus s) {
  switch (s) {
    case RowStatus::kPass: return "pass";
    case RowStatus::kFail: return "fail";
    case RowStatus::kUnavailable: return "unavailable";
    case RowStatus::kInsufficient: return "insufficient";
  }
  return "?";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kShip: return "ship";
    case Verdict::kHold: return "hold";
    case Verdict::kRollback: return "rollback";
  }
  return "?";
}

namespace release_internal {

std::string MissingBoth(const ReleaseInputs& in, bool base_missing, bool cand_missing,
                        std::initializer_list<std::string_view> keys, std::string_view figure) {
  std::vector<std::string> parts;
  if (base_missing) parts.push_back(MissingReason(in.baseline, "baseline", keys, figure));
  if (cand_missing) parts.push_back(MissingReason(in.candidate, "candidate", keys, figure));
  return absl::StrJoin(parts, "; ");
}

std::string MissingReason(const Arm& arm, std::string_view arm_name,
                          std::initializer_list<std::string_view> keys,
                          std::string_view figure) {
  for (std::string_view k : keys) {
    auto it = arm.unavailable.find(std::string(k));
    if (it != arm.unavailable.end()) return absl::StrCat(std::string(arm_name), ": ", it->second);
  }
  return absl::StrCat(std::string(arm_name), ": no ", std::string(figure),
                      " figure (no reason given)");
}

uint64_t SampleCount(const std::vector<WeightedValue>& values) {
  uint64_t n = 0;
  for (const WeightedValue& v : values) n += v.weight;
  return n;
}

std::optional<double> WindowThroughput(const ArmWindow& w) {
  if (w.end_ns <= w.start_ns) return std::nullopt;
  return static_cast<double>(w.requests) / (static_cast<double>(w.end_ns - w.start_ns) * 1e-9);
}

bool SameLoad(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *a <= 0 || *b <= 0) return true;
  return std::fabs(*a / *b - 1) <= kLoadTolerance;
}

std::optional<double> ErrorRate(std::optional<uint64_t> errors, uint64_t requests) {
  if (!errors || requests == 0) return std::nullopt;
  return static_cast<double>(*errors) / static_cast<double>(requests);
}

int LongestRun(const std::vector<bool>& fired) {
  int best = 0, run = 0;
  for (bool f : fired) {
    run = f ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

const LayerTime* FindLayer(const Arm& arm, std::string_view layer) {
  for (const LayerTime& l : arm.layers) {
    if (l.layer == layer) return &l;
  }
  return nullptr;
}

}  // namespace release_internal

std::string ArmName(const Arm& arm) {
  return arm.key == "revision" ? arm.revision : absl::StrCat(arm.key, "=", arm.revision);
}

std::string ProfileRevision(const Arm& arm) {
  if (arm.key == "revision") return arm.revision;
  auto it = arm.inputs.find("revision");
  if (it == arm.inputs.end() || it->second.find(',') != std::string::npos) return "";
  return it->second;
}

namespace release_internal {

std::string Ms(double ns) { return text::MillisWithUnit(ns); }
std::string SignedPercent(double change) { return absl::StrFormat("%+.1f%%", change * 100); }

MfuBasis ChooseMfuBasis(const Arm& b, const Arm& c) {
  if (b.mfu && c.mfu) return MfuBasis::kMfu;
  if (b.achieved_flops_per_s && c.achieved_flops_per_s) return MfuBasis::kAchievedFlops;
  return MfuBasis::kNone;
}
std::optional<double> MfuFigure(MfuBasis basis, const Arm& a) {
  return basis == MfuBasis::kMfu ? a.mfu
         : basis == MfuBasis::kAchievedFlops ? a.achieved_flops_per_s : std::nullopt;
}
std::optional<double> MfuFigure(MfuBasis basis, const ArmWindow& w) {
  return basis == MfuBasis::kMfu ? w.mfu
         : basis == MfuBasis::kAchievedFlops ? w.achieved_flops_per_s : std::nullopt;
}
std::string_view MfuBasisText(MfuBasis basis) {
  return basis == MfuBasis::kMfu ? "mfu"
         : basis == MfuBasis::kAchievedFlops ? "achieved_flops_per_s" : "none";
}

Context MakeContext(const ReleaseInputs& in) {
  Context c;
  c.in = &in;
  c.hold_windows = std::max(1, in.hold_windows);
  c.n_baseline = SampleCount(in.baseline.latencies_ns);
  c.n_candidate = SampleCount(in.candidate.latencies_ns);
  const uint64_t need = static_cast<uint64_t>(std::max(0, in.min_samples));
  c.samples_ok = c.n_baseline >= need && c.n_candidate >= need;
  c.samples_text = absl::StrCat("baseline ", c.n_baseline, " latency samples, candidate ",
                                c.n_candidate, "; need ≥ ", need, " per arm");
  absl::StatusOr<MannWhitneyResult> t =
      MannWhitneyU(in.baseline.latencies_ns, in.candidate.latencies_ns);
  if (t.ok()) {
    c.test = *t;
  } else {
    c.test_error = std::string(t.status().message());
  }
  c.alpha_sketch = std::max(in.baseline.relative_accuracy, in.candidate.relative_accuracy);
  c.latency_threshold = std::max(kMinLatencyRegression, 2 * c.alpha_sketch);

  if (const WorkloadProfile* p = in.profile) {
    const std::string br = ProfileRevision(in.baseline);
    const std::string cr = ProfileRevision(in.candidate);
    std::vector<std::string> changes;
    if (p->PrecisionOf(br) != p->PrecisionOf(cr)) {
      changes.push_back(absl::StrCat("precision ", std::string(PrecisionName(p->PrecisionOf(br))),
                                     " → ", std::string(PrecisionName(p->PrecisionOf(cr)))));
    }
    // An absent sparsity.<REV> means dense.
    auto sparsity = [&](const std::string& rev) {
      auto it = p->revision_sparsity.find(rev);
      return it == p->revision_sparsity.end() ? std::string("dense") : it->second;
    };
    if (sparsity(br) != sparsity(cr)) {
      changes.push_back(absl::StrCat("sparsity ", sparsity(br), " → ", sparsity(cr)));
    }
    c.model_changed = !changes.empty();
    c.model_change_text = absl::StrJoin(changes, ", ");
  }
  return c;
}

std::vector<LayerTime> LayerDeltas(const Arm& baseline, const Arm& candidate) {
  // Union of layer names; a layer absent from one arm counts 0 there (it appeared or
  // vanished, e.g. a fused module).
  std::map<std::string, LayerTime> by_name;
  for (const LayerTime& l : candidate.layers) {
    LayerTime d = l;  // the candidate's top operator and its figure
    by_name[l.layer] = d;
  }
  for (const LayerTime& l : baseline.layers) {
    auto [it, inserted] = by_name.try_emplace(l.layer);
    LayerTime& d = it->second;
    if (inserted) {
      d.layer = l.layer;
      d.top_operator = l.top_operator;
      d.ns_per_request = 0;
      d.p99_ns.reset();
    }
    d.ns_per_request -= l.ns_per_request;
    d.p99_ns = d.p99_ns && l.p99_ns ? std::optional<double>(*d.p99_ns - *l.p99_ns) : std::nullopt;
  }
  std::vector<LayerTime> out;
  out.reserve(by_name.size());
  for (auto& [name, d] : by_name) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(), [](const LayerTime& a, const LayerTime& b) {
    return a.ns_per_request > b.ns_per_request;
  });
  return out;
}

void Decide(const Context& c, Recommendation* r) {
  const int hw = c.hold_windows;
  std::vector<const Trigger*> held, fired, quiet, not_evaluable;
  for (const Trigger& t : r->triggers) {
    if (!t.evaluable) {
      not_evaluable.push_back(&t);
    } else if (t.held) {
      held.push_back(&t);
    } else if (t.fired) {
      fired.push_back(&t);
    } else {
      quiet.push_back(&t);
    }
  }
  auto names = [](const std::vector<const Trigger*>& ts) {
    std::vector<std::string> n;
    for (const Trigger* t : ts) n.push_back(t->name);
    return absl::StrJoin(n, ", ");
  };
  // Longest run of any trigger, for "why not rollback".
  const Trigger* longest = nullptr;
  for (const Trigger& t : r->triggers) {
    if (t.evaluable && t.fired && (!longest || t.windows_held > longest->windows_held)) {
      longest = &t;
    }
  }

  if (!held.empty()) {
    r->verdict = Verdict::kRollback;
    for (const Trigger* t : held) {
      r->reasons.push_back(
          t->name == kQualityTrigger
              ? absl::StrCat(t->name, " trigger holds: ", t->evidence, " (owner: ", t->owner, ")")
              : absl::StrCat(t->name, " trigger held for ", t->windows_held,
                             " consecutive candidate windows (≥ ", hw, "): ", t->evidence,
                             " (owner: ", t->owner, ")"));
    }
    r->rejected.push_back(absl::StrCat("ship: rollback trigger(s) held: ", names(held)));
    r->rejected.push_back(absl::StrCat(
        "hold: a trigger that held for ", hw,
        " consecutive windows is the rollback rule; more measurement would not change it"));
    return;
  }

  std::vector<std::string> hold_reasons;
  for (const Trigger* t : fired) {
    hold_reasons.push_back(absl::StrCat(t->name, " trigger fired but held for only ",
                                        t->windows_held, " consecutive candidate window(s) (< ",
                                        hw, "): ", t->evidence, " (owner: ", t->owner, ")"));
  }
  for (const ValidationRow& row : r->matrix) {
    const bool blocking = row.required && (row.status == RowStatus::kInsufficient ||
                                           row.status == RowStatus::kUnavailable);
    if (blocking) {
      hold_reasons.push_back(absl::StrCat(row.metric, " is ", std::string(RowStatusName(row.status)),
                                          " and required: ", row.reason));
    } else if (row.status == RowStatus::kFail) {
      hold_reasons.push_back(absl::StrCat(row.metric, " failed (", row.criterion, "): ",
                                          row.reason));
    }
  }
  if (!hold_reasons.empty()) {
    r->verdict = Verdict::kHold;
    r->reasons = hold_reasons;
    r->rejected.push_back(
        longest ? absl::StrCat("rollback: no trigger held for ", hw,
                               " consecutive windows (longest: ", longest->name, ", ",
                               longest->windows_held, ")")
                : std::string("rollback: no rollback trigger fired"));
    r->rejected.push_back(absl::StrCat("ship: ", hold_reasons.front(),
                                       hold_reasons.size() > 1
                                           ? absl::StrCat(" (and ", hold_reasons.size() - 1,
                                                          " more reason(s))")
                                           : std::string()));
    return;
  }

  r->verdict = Verdict::kShip;
  r->reasons.push_back(absl::StrCat("no evaluable trigger fired in any window (",
                                    names(quiet), ")"));
  std::vector<std::string> passed;
  for (const ValidationRow& row : r->matrix) {
    if (row.status == RowStatus::kPass) passed.push_back(row.metric);
  }
  r->reasons.push_back(absl::StrCat("rows passed: ", absl::StrJoin(passed, ", "), "; ",
                                    c.samples_text));
  for (const ValidationRow& row : r->matrix) {
    if (row.status == RowStatus::kPass && row.test && row.metric == "p99 latency") {
      r->reasons.push_back(absl::StrFormat(
          "p99 %s → %s (%s); Mann–Whitney U p = %.3g, effect %.3f", Ms(*row.baseline * 1e6),
          Ms(*row.candidate * 1e6), SignedPercent(row.change.value_or(0)), row.test->p_value,
          row.test->effect));
    }
  }
  for (const Trigger* t : not_evaluable) {
    r->reasons.push_back(absl::StrCat("not evaluated: ", t->name, " (", t->evidence, ")"));
  }
  r->rejected.push_back("rollback: no rollback trigger fired");
  r->rejected.push_back(
      "hold: no trigger fired in any window, no required row is insufficient or unavailable, "
      "and no row failed");
}

}  // namespace release_internal

Recommendation Recommend(const ReleaseInputs& in) {
  using namespace release_internal;
  const Context c = MakeContext(in);
  Recommendation r;
  r.matrix = BuildMatrix(c);
  r.layer_deltas = LayerDeltas(in.baseline, in.candidate);
  r.triggers = EvaluateTriggers(c, r.layer_deltas);
  for (const auto& [k, v] : in.baseline.inputs) r.inputs["baseline." + k] = v;
  for (const auto& [k, v] : in.candidate.inputs) r.inputs["candidate." + k] = v;
  // The arm revisions are what the verdict is about; keep them even when inputs omit them.
  for (const auto& [name, arm] : {std::pair<const char*, const Arm*>{"baseline", &in.baseline},
                                  {"candidate", &in.candidate}}) {
    if (arm->revision.empty()) continue;
    if (arm->key == "revision") {
      r.inputs.try_emplace(absl::StrCat(name, ".revision"), arm->revision);
    } else {
      r.inputs.try_emplace(absl::StrCat(name, ".arm"), ArmName(*arm));
    }
  }
  if (in.profile) {
    r.inputs["profile.model"] = in.profile->model;
    if (!in.profile->revision.empty()) r.inputs["profile.revision"] = in.profile->revision;
    // The power mode each arm ran in is in its inputs (power.*); the budget is the profile's.
    r.inputs["profile.power_budget_w"] =
        in.profile->power_budget_w ? absl::StrFormat("%g", *in.profile->power_budget_w) : "not given";
  }
  Decide(c, &r);
  return r;
}

}  // namespace opmap::analysis
