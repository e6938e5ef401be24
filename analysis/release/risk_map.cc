#include "analysis/release/risk_map.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis {
namespace {

using release_internal::kModelingOwner;
using release_internal::kRuntimeOwner;

struct TriggerPlan {
  std::string_view trigger;
  const char* mitigation;
};

// What the owner does about each trigger ("%s" = the layer or arm it names).
constexpr TriggerPlan kTriggerPlans[] = {
    {release_internal::kP99Trigger,
     "find what changed in the layer with the largest p99 increase (%s) and fix or revert it; "
     "re-run the validation matrix at the same load"},
    {release_internal::kMfuTrigger,
     "compare the kernels chosen for the largest layers (GEMM tuning, fusion) between the arms"},
    {release_internal::kStallTrigger,
     "look for lost fusion or a layout change that adds memory traffic (operator mapping sheet)"},
    {release_internal::kQualityTrigger,
     "measure quality on the eval set for the candidate; keep the baseline precision until it passes"},
    {release_internal::kErrorsTrigger, "read the failing requests' errors; fix before widening"},
    {release_internal::kPerfPerWattTrigger,
     "check the power mode (limit, clocks, throttle reasons) and the work per request between the arms"},
};

std::string TriggerMitigation(const Trigger& t) {
  for (const TriggerPlan& p : kTriggerPlans) {
    if (p.trigger == t.name) {
      return absl::StrReplaceAll(p.mitigation, {{"%s", t.layer.empty() ? "see evidence" : t.layer}});
    }
  }
  return "investigate the evidence";
}

}  // namespace

std::vector<Risk> ReleaseRisks(const ReleaseInputs& in, const Recommendation& r) {
  std::vector<Risk> out;
  const std::string rollback = absl::StrCat("roll back to ", ArmName(in.baseline));
  for (const Trigger& t : r.triggers) {
    Risk k;
    k.arm = ArmName(in.candidate);
    k.subject = t.name;
    k.evidence = t.evidence;
    k.owner = t.owner;
    k.rollback_boundary = rollback;
    if (!t.evaluable) {
      if (t.name == release_internal::kPerfPerWattTrigger) {
        k.kind = "missing power data";
        k.mitigation = "run the agent with NVML readable on both arms (docs/operations.md, power)";
      } else if (t.name == release_internal::kQualityTrigger) {
        // Quality evidence is owed only for a precision or sparsity change, and then the
        // required quality row below names it.
        continue;
      } else {
        k.kind = "missing evidence";
        k.mitigation = "collect the figure the evidence names, then report again";
      }
      out.push_back(std::move(k));
      continue;
    }
    if (!t.fired) continue;
    k.kind = t.held ? "trigger held" : "near trigger";
    k.mitigation = TriggerMitigation(t);
    out.push_back(std::move(k));
  }
  for (const ValidationRow& row : r.matrix) {
    if (!row.required || row.status == RowStatus::kPass || row.status == RowStatus::kFail) continue;
    Risk k;
    k.arm = ArmName(in.candidate);
    k.kind = row.metric == "quality" ? "missing quality evidence" : "missing evidence";
    k.subject = row.metric;
    k.evidence = absl::StrCat(std::string(RowStatusName(row.status)), ": ", row.reason);
    k.owner = std::string(OwnerRoleName(row.metric == "quality" ? kModelingOwner : kRuntimeOwner));
    k.mitigation = "collect enough evidence for this required row (more windows, or the profile key it names)";
    k.rollback_boundary = "the release holds until the row has evidence";
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<Risk> FitRisks(const FitInputs& in, const FitResult& fit) {
  std::vector<Risk> out;
  const std::string keep =
      fit.best ? absl::StrCat("keep serving on ", fit.rows[*fit.best].arm) : "keep the current platform";
  for (size_t i = 0; i < fit.rows.size(); ++i) {
    const FitRow& row = fit.rows[i];
    if (row.verdict == FitVerdict::kDoesNotFit || row.verdict == FitVerdict::kFitsWithMitigation) {
      Risk k;
      k.arm = row.arm;
      // No knee: no window met the SLA; a knee short of the throughput target or over the
      // power budget is a target missed.
      k.kind = row.knee_rps ? "target missed" : "SLA missed";
      k.subject = "fit verdict";
      k.evidence = row.verdict_reason;
      k.owner = row.mitigation_owner.empty() ? std::string(OwnerRoleName(kRuntimeOwner)) : row.mitigation_owner;
      k.mitigation = row.mitigation.empty() ? "do not place this workload here at this SLA" : row.mitigation;
      k.rollback_boundary = keep;
      out.push_back(std::move(k));
    }
    for (const Trigger& t : row.triggers) {
      Risk k;
      k.arm = row.arm;
      k.kind = t.held ? "trigger held" : "near trigger";
      k.subject = t.name;
      k.evidence = absl::StrCat("against ", fit.best ? fit.rows[*fit.best].arm : "", ": ", t.evidence);
      k.owner = t.owner;
      k.mitigation = TriggerMitigation(t);
      k.rollback_boundary = keep;
      out.push_back(std::move(k));
    }
    for (const LayerBottleneckSummary& l : row.layers) {
      if (l.cls != BottleneckClass::kUnclassified) continue;
      const ClassPlan plan = PlanForClass(l.cls, l.layer_type);
      out.push_back({row.arm, "unclassified evidence", l.layer_type, l.evidence,
                     std::string(OwnerRoleName(plan.owner)), plan.action + ": " + plan.validation_scope,
                     plan.rollback_boundary});
    }
    if (!row.power_unavailable.empty()) {
      std::string evidence = row.power_unavailable;
      if (in.profile && in.profile->power_budget_w) {
        absl::StrAppend(&evidence, absl::StrFormat("; the power budget %g W is not checked",
                                                   *in.profile->power_budget_w));
      }
      out.push_back({row.arm, "missing power data", "perf per watt", evidence,
                     std::string(OwnerRoleName(kRuntimeOwner)),
                     "run the agent with NVML readable on this platform (docs/operations.md, power)",
                     "no decision on perf per watt for this arm"});
    }
    if (in.profile && in.profile->power_budget_w && row.gpu_watts && *row.gpu_watts > *in.profile->power_budget_w) {
      out.push_back({row.arm, "power budget", "GPU power at the knee",
                     absl::StrFormat("%.1f W > %g W", *row.gpu_watts, *in.profile->power_budget_w),
                     std::string(OwnerRoleName(kRuntimeOwner)),
                     "lower the power limit and measure again, or serve below the knee", keep});
    }
  }
  return out;
}

void WriteRisksJson(const std::vector<Risk>& risks, text::JsonWriter& w) {
  w.BeginArray();
  for (const Risk& r : risks) {
    w.BeginObject();
    w.Field("arm", r.arm).Field("kind", r.kind).Field("subject", r.subject);
    w.Field("evidence", r.evidence).Field("owner", r.owner);
    w.Field("mitigation", r.mitigation).Field("rollback_boundary", r.rollback_boundary);
    w.EndObject();
  }
  w.EndArray();
}

DocSection RiskMapSection(const std::vector<Risk>& risks) {
  DocSection s;
  s.heading = "Owner and risk map";
  DocTable t;
  t.columns = {"arm", "risk", "subject", "owner", "mitigation", "rollback boundary", "evidence"};
  for (const Risk& r : risks) {
    t.rows.push_back({r.arm, r.kind, r.subject, r.owner, r.mitigation, r.rollback_boundary, r.evidence});
  }
  if (risks.empty()) t.notes.push_back("no open risk");
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace opmap::analysis
