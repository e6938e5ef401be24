// Mann–Whitney U test (two-sided) on two samples given as weighted values, so that both
// exact samples (weight 1 each) and sketch bins (bin value, count) can be tested. Ties
// get mid-ranks and the normal approximation uses the tie-corrected variance
//   σ² = n1·n2/12 · ((n+1) − Σ(t³ − t)/(n(n−1)))
// with a continuity correction of 0.5. Reported with the common-language effect size
// P(candidate > baseline) + ½·P(equal) = U_candidate ÷ (n1·n2).
#ifndef OPMAP_ANALYSIS_RELEASE_MANN_WHITNEY_H_
#define OPMAP_ANALYSIS_RELEASE_MANN_WHITNEY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

struct WeightedValue {
  double value = 0;
  uint64_t weight = 1;  // how many observations have this value
};

struct MannWhitneyResult {
  uint64_t n_baseline = 0;
  uint64_t n_candidate = 0;
  double u_candidate = 0;      // U of the candidate sample
  double z = 0;                // standardized, continuity-corrected; > 0: candidate larger
  double p_value = 1;          // two-sided
  double effect = 0.5;         // P(candidate > baseline) + ½ P(tie)
};

// InvalidArgument when either sample is empty or a value is not finite. Samples below
// the ≥ 50 per arm of docs/metrics.md are tested anyway; the caller reports them as too small.
absl::StatusOr<MannWhitneyResult> MannWhitneyU(std::vector<WeightedValue> baseline,
                                               std::vector<WeightedValue> candidate);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_MANN_WHITNEY_H_
