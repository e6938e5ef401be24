#include "analysis/release/mann_whitney.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace opmap::analysis {
namespace {

struct Tagged {
  double value;
  uint64_t weight;
  bool candidate;
};

absl::Status Append(const std::vector<WeightedValue>& in, bool candidate, const char* arm,
                    std::vector<Tagged>* out, uint64_t* n) {
  for (const WeightedValue& v : in) {
    if (!std::isfinite(v.value)) {
      return absl::InvalidArgumentError(absl::StrCat(arm, " sample has a non-finite value"));
    }
    if (v.weight == 0) continue;  // no observation: contributes nothing
    out->push_back({v.value, v.weight, candidate});
    *n += v.weight;
  }
  if (*n == 0) return absl::InvalidArgumentError(absl::StrCat(arm, " sample is empty"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MannWhitneyResult> MannWhitneyU(std::vector<WeightedValue> baseline,
                                               std::vector<WeightedValue> candidate) {
  MannWhitneyResult r;
  std::vector<Tagged> all;
  all.reserve(baseline.size() + candidate.size());
  if (absl::Status s = Append(baseline, false, "baseline", &all, &r.n_baseline); !s.ok()) {
    return s;
  }
  if (absl::Status s = Append(candidate, true, "candidate", &all, &r.n_candidate); !s.ok()) {
    return s;
  }
  std::sort(all.begin(), all.end(),
            [](const Tagged& a, const Tagged& b) { return a.value < b.value; });

  // Walk groups of equal values: the group's t observations share the mid-rank of the
  // positions (before, before + t]. Sums in long double: with sketch bins the weights
  // reach 1e9 and t³ would lose the low digits of the tie correction in double.
  long double rank_sum_candidate = 0, tie_sum = 0, before = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    long double t = 0, t_candidate = 0;
    for (; j < all.size() && all[j].value == all[i].value; ++j) {
      t += all[j].weight;
      if (all[j].candidate) t_candidate += all[j].weight;
    }
    const long double mid_rank = before + (t + 1) / 2;
    rank_sum_candidate += t_candidate * mid_rank;
    tie_sum += t * t * t - t;
    before += t;
    i = j;
  }

  const long double n1 = r.n_baseline, n2 = r.n_candidate, n = n1 + n2;
  const long double u_candidate = rank_sum_candidate - n2 * (n2 + 1) / 2;
  r.u_candidate = static_cast<double>(u_candidate);
  r.effect = static_cast<double>(u_candidate / (n1 * n2));
  const long double variance = n1 * n2 / 12 * ((n + 1) - tie_sum / (n * (n - 1)));
  if (!(variance > 0)) {
    // Every observation equal: no evidence of a shift either way.
    r.z = 0;
    r.p_value = 1;
    return r;
  }
  const long double d = u_candidate - n1 * n2 / 2;
  // Continuity correction: move |d| half a unit toward 0, never past it (then p = 1).
  const long double corrected = std::max<long double>(std::fabs(d) - 0.5L, 0);
  r.z = static_cast<double>((d < 0 ? -corrected : corrected) / std::sqrt(variance));
  r.p_value = std::min(1.0, std::erfc(std::fabs(r.z) / std::sqrt(2.0)));
  return r;
}

}  // namespace opmap::analysis
