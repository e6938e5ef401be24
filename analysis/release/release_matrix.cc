// The validation matrix (docs/metrics.md "Release recommendation"): one row per metric, each
// with both arms' figures, the criterion, the test behind it and a status. A figure that
// is missing in an arm makes the row unavailable with that arm's reason, never 0.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis::release_internal {

void Conclude(ValidationRow& row, const std::vector<std::string>& failures) {
  if (failures.empty()) {
    row.status = RowStatus::kPass;
  } else {
    row.status = RowStatus::kFail;
    row.reason = absl::StrJoin(failures, "; ");
  }
}

namespace {

ValidationRow LatencyRow(const Context& c, std::string_view pct,
                         std::optional<double> Arm::*field, std::optional<double> sla_ms) {
  const ReleaseInputs& in = *c.in;
  ValidationRow row;
  row.metric = absl::StrCat(std::string(pct), " latency");
  row.unit = "ms";
  row.required = pct == "p99" || sla_ms.has_value();
  const std::optional<double>& b = in.baseline.*field;
  const std::optional<double>& k = in.candidate.*field;
  std::vector<std::string> crit;
  if (sla_ms) crit.push_back(absl::StrFormat("≤ SLA %g ms", *sla_ms));
  crit.push_back(absl::StrFormat(
      "not > %.1f%% worse than baseline (max(5%%, 2α), α = %.2f%%) with Mann–Whitney U p < %g",
      c.latency_threshold * 100, c.alpha_sketch * 100, in.alpha));
  row.criterion = absl::StrJoin(crit, " and ");
  if (b) row.baseline = *b / 1e6;
  if (k) row.candidate = *k / 1e6;
  row.test = c.test;
  if (!b || !k) {
    row.status = RowStatus::kUnavailable;
    row.reason = MissingBoth(in, !b, !k, {std::string_view(pct), "latency"}, pct);
    return row;
  }
  if (*b > 0) row.change = *k / *b - 1;
  if (!c.samples_ok) {
    row.status = RowStatus::kInsufficient;
    row.reason = c.samples_text;
    return row;
  }
  std::vector<std::string> failures;
  if (sla_ms && *row.candidate > *sla_ms) {
    failures.push_back(absl::StrFormat("candidate %s %.2f ms > SLA %g ms", std::string(pct),
                                       *row.candidate, *sla_ms));
  }
  if (row.change && *row.change > c.latency_threshold) {
    if (!c.test) {
      failures.push_back(absl::StrCat(std::string(pct), " ", SignedPercent(*row.change),
                                      " and no Mann–Whitney U test: ", c.test_error));
    } else if (c.test->p_value < in.alpha && c.test->z > 0) {
      failures.push_back(absl::StrFormat("%s %s (> %.1f%%), Mann–Whitney U p = %.3g",
                                         std::string(pct), SignedPercent(*row.change),
                                         c.latency_threshold * 100, c.test->p_value));
    } else {
      row.reason = absl::StrFormat("%s but not significant (Mann–Whitney U p = %.3g)",
                                   SignedPercent(*row.change), c.test->p_value);
    }
  }
  Conclude(row, failures);
  return row;
}

ValidationRow ThroughputRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  // A plain double: GCC 12 flags a copied std::optional here as maybe-uninitialized.
  const bool has_target = in.profile && in.profile->throughput_target.has_value();
  const double target = has_target ? *in.profile->throughput_target : 0;
  ValidationRow row;
  row.metric = "throughput";
  row.unit = "req/s";
  row.required = has_target;
  std::vector<std::string> crit;
  if (has_target) crit.push_back(absl::StrFormat("≥ target %g req/s", target));
  crit.push_back(absl::StrFormat(
      "not > %.0f%% below baseline with a Poisson rate test p < %g", kLoadTolerance * 100,
      in.alpha));
  row.criterion = absl::StrJoin(crit, " and ");
  const auto& b = in.baseline.throughput_rps;
  const auto& k = in.candidate.throughput_rps;
  row.baseline = b;
  row.candidate = k;
  if (!b || !k) {
    row.status = RowStatus::kUnavailable;
    row.reason = MissingBoth(in, !b, !k, {"throughput"}, "throughput");
    return row;
  }
  if (*b > 0) row.change = *k / *b - 1;
  const uint64_t need = static_cast<uint64_t>(std::max(0, in.min_samples));
  if (in.baseline.requests < need || in.candidate.requests < need) {
    row.status = RowStatus::kInsufficient;
    row.reason = absl::StrCat("baseline ", in.baseline.requests, " requests, candidate ",
                              in.candidate.requests, "; need ≥ ", need, " per arm");
    return row;
  }
  std::vector<std::string> failures;
  if (has_target && *k < target) {
    failures.push_back(absl::StrFormat("candidate %.2f req/s < target %g", *k, target));
  }
  // Requests counted in capture windows are Poisson samples of the rate: a window of a
  // few seconds moves ±5% by chance, so a drop must also be significant. Rate n/T has
  // variance n/T² = rate/T; z = (k − b) / sqrt(b/T_b + k/T_k).
  auto seconds = [](const Arm& a) {
    double s = 0;
    for (const ArmWindow& w : a.windows) s += std::max<int64_t>(0, w.end_ns - w.start_ns) * 1e-9;
    return s;
  };
  const double tb = seconds(in.baseline), tk = seconds(in.candidate);
  std::optional<double> p;
  if (tb > 0 && tk > 0 && (*b / tb + *k / tk) > 0) {
    const double z = (*k - *b) / std::sqrt(*b / tb + *k / tk);
    p = std::erfc(std::fabs(z) / std::sqrt(2.0));
  }
  if (row.change && *row.change < -kLoadTolerance) {
    if (!p || *p < in.alpha) {
      failures.push_back(absl::StrFormat("%s vs baseline%s", SignedPercent(*row.change),
                                         p ? absl::StrFormat(" (Poisson rate test p = %.3g)", *p)
                                           : std::string(" (window times unknown: untested)")));
    } else {
      row.reason = absl::StrFormat("%s vs baseline is within chance (Poisson rate test p = %.3g)",
                                   SignedPercent(*row.change), *p);
    }
  }
  Conclude(row, failures);
  return row;
}

ValidationRow MfuRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  const MfuBasis basis = ChooseMfuBasis(in.baseline, in.candidate);
  ValidationRow row;
  row.metric = "MFU";
  row.unit = basis == MfuBasis::kAchievedFlops ? "TFLOP/s" : "%";
  row.criterion = absl::StrFormat("not > %.0f%% lower (relative) at equal load", kMfuDrop * 100);
  if (basis == MfuBasis::kNone) {
    // Say why for each arm that has neither figure.
    const bool b = in.baseline.mfu || in.baseline.achieved_flops_per_s;
    const bool k = in.candidate.mfu || in.candidate.achieved_flops_per_s;
    row.status = RowStatus::kUnavailable;
    row.reason = (b && k) ? std::string("one arm has MFU and the other only achieved FLOP/s")
                          : MissingBoth(in, !b, !k, {"mfu", "achieved_flops_per_s"}, "MFU");
    return row;
  }
  const double b = *MfuFigure(basis, in.baseline), k = *MfuFigure(basis, in.candidate);
  // Achieved FLOP/s in the unit that keeps digits: a CPU model runs at GFLOP/s.
  const bool tera = std::max(b, k) >= 1e12;
  if (basis == MfuBasis::kAchievedFlops && !tera) row.unit = "GFLOP/s";
  const double scale = basis == MfuBasis::kMfu ? 100 : tera ? 1e-12 : 1e-9;
  row.baseline = b * scale;
  row.candidate = k * scale;
  if (basis == MfuBasis::kAchievedFlops) {
    row.criterion += " (achieved FLOP/s: no peak for MFU)";
  }
  if (b > 0) row.change = k / b - 1;
  if (!SameLoad(in.baseline.throughput_rps, in.candidate.throughput_rps)) {
    row.status = RowStatus::kUnavailable;
    row.reason = absl::StrFormat(
        "arms ran at different loads (%.2f vs %.2f req/s, > %.0f%% apart); MFU is compared "
        "at equal load",
        *in.baseline.throughput_rps, *in.candidate.throughput_rps, kLoadTolerance * 100);
    return row;
  }
  std::vector<std::string> failures;
  if (row.change && *row.change < -kMfuDrop) {
    failures.push_back(absl::StrFormat("%s vs baseline", SignedPercent(*row.change)));
  }
  Conclude(row, failures);
  return row;
}

ValidationRow StallRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  ValidationRow row;
  row.metric = "memory-stall share";
  row.unit = "%";
  row.criterion = absl::StrFormat("not > %.0f points higher", kStallRise * 100);
  const auto& b = in.baseline.memory_stall_share;
  const auto& k = in.candidate.memory_stall_share;
  if (!b || !k) {
    row.status = RowStatus::kUnavailable;
    row.reason = MissingBoth(in, !b, !k, {"memory_stall_share"}, "memory-stall share");
    return row;
  }
  row.baseline = *b * 100;
  row.candidate = *k * 100;
  row.change = (*k - *b) * 100;  // points
  std::vector<std::string> failures;
  if (*k - *b > kStallRise) {
    failures.push_back(absl::StrFormat("%+.1f points vs baseline", *row.change));
  }
  Conclude(row, failures);
  return row;
}

ValidationRow ErrorRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  ValidationRow row;
  row.metric = "error rate";
  row.unit = "%";
  row.criterion = "not higher than baseline";
  const auto b = ErrorRate(in.baseline.errors, in.baseline.requests);
  const auto k = ErrorRate(in.candidate.errors, in.candidate.requests);
  if (!b || !k) {
    row.status = RowStatus::kUnavailable;
    row.reason = MissingBoth(in, !b, !k, {"errors"}, "error count (or no requests)");
    return row;
  }
  row.baseline = *b * 100;
  row.candidate = *k * 100;
  row.change = (*k - *b) * 100;  // points
  const uint64_t need = static_cast<uint64_t>(std::max(0, in.min_samples));
  if (in.baseline.requests < need || in.candidate.requests < need) {
    row.status = RowStatus::kInsufficient;
    row.reason = absl::StrCat("baseline ", in.baseline.requests, " requests, candidate ",
                              in.candidate.requests, "; need ≥ ", need, " per arm");
    return row;
  }
  std::vector<std::string> failures;
  if (*k > *b) {
    failures.push_back(absl::StrFormat("%d/%d vs %d/%d failed requests", *in.candidate.errors,
                                       in.candidate.requests, *in.baseline.errors,
                                       in.baseline.requests));
  }
  Conclude(row, failures);
  return row;
}

ValidationRow QualityRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  const WorkloadProfile* p = in.profile;
  ValidationRow row;
  row.metric = "quality";
  row.required = c.model_changed;
  if (p) row.unit = p->quality_metric;
  const std::string why_required =
      c.model_changed ? absl::StrCat(" (required: ", c.model_change_text, ")") : std::string();
  if (!p) {
    row.status = RowStatus::kUnavailable;
    row.reason = "no workload profile (quality.<REV>, quality_threshold)";
    return row;
  }
  auto q = [&](const std::string& rev) -> std::optional<double> {
    auto it = p->quality.find(rev);
    return it == p->quality.end() ? std::nullopt : std::optional<double>(it->second);
  };
  row.baseline = q(ProfileRevision(in.baseline));
  row.candidate = q(ProfileRevision(in.candidate));
  if (row.baseline && row.candidate) row.change = *row.candidate - *row.baseline;
  if (p->quality_threshold) {
    row.criterion = absl::StrFormat("%s threshold %g", p->quality_higher_is_better ? "≥" : "≤",
                                    *p->quality_threshold);
  }
  if (!p->quality_threshold) {
    row.status = RowStatus::kUnavailable;
    row.reason = absl::StrCat("the workload profile has no quality_threshold", why_required);
    return row;
  }
  if (!row.candidate) {
    row.status = RowStatus::kUnavailable;
    row.reason = absl::StrCat("no quality.", ProfileRevision(in.candidate), " in the workload profile",
                              why_required);
    return row;
  }
  const bool ok = p->quality_higher_is_better ? *row.candidate >= *p->quality_threshold
                                              : *row.candidate <= *p->quality_threshold;
  std::vector<std::string> failures;
  if (!ok) {
    failures.push_back(absl::StrFormat("candidate %g %s threshold %g", *row.candidate,
                                       p->quality_higher_is_better ? "<" : ">",
                                       *p->quality_threshold));
  }
  Conclude(row, failures);
  if (ok && c.model_changed) row.reason = absl::StrCat("checked for ", c.model_change_text);
  return row;
}

}  // namespace

std::vector<ValidationRow> BuildMatrix(const Context& c) {
  const WorkloadProfile* p = c.in->profile;
  auto sla = [&](std::optional<double> WorkloadProfile::*f) {
    return p ? p->*f : std::optional<double>();
  };
  std::vector<ValidationRow> rows;
  rows.push_back(LatencyRow(c, "p50", &Arm::p50_ns, sla(&WorkloadProfile::sla_p50_ms)));
  rows.push_back(LatencyRow(c, "p95", &Arm::p95_ns, sla(&WorkloadProfile::sla_p95_ms)));
  rows.push_back(LatencyRow(c, "p99", &Arm::p99_ns, sla(&WorkloadProfile::sla_p99_ms)));
  rows.push_back(ThroughputRow(c));
  rows.push_back(MfuRow(c));
  rows.push_back(StallRow(c));
  rows.push_back(PerfPerWattRow(c));
  rows.push_back(ErrorRow(c));
  rows.push_back(QualityRow(c));
  return rows;
}

}  // namespace opmap::analysis::release_internal
