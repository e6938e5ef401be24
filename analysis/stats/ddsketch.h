// DDSketch: a mergeable quantile sketch with a relative-error guarantee, for latency
// percentiles that must combine across threads, processes, hosts and time windows
// (docs/metrics.md, "Latency percentiles"). Never average percentiles: merge sketches.
//
// Mapping (the OpenTelemetry exponential-histogram convention): at scale s, with
// γ = 2^(2^-s), bin i holds the values v in (γ^i, γ^(i+1)], i.e.
//     index(v) = ceil(log2(v) * 2^s) - 1.
// Exact powers of two close a bin: index(1.0) = -1, index(2.0) = 2^s - 1. A bin is
// reported as 2γ^(i+1)/(γ+1), whose relative distance to any value of the bin is at
// most α = (γ-1)/(γ+1). The default scale 6 gives γ = 2^(1/64) and
//     α = 0.005415159415902569 (≈ 0.54%).
// Bin boundaries are the correctly rounded doubles nearest 2^(k/64) (a fixed table),
// so every machine bins a value identically; rounding adds < 1e-15 to α.
//
// Values ≤ 0 (durations can be 0) go to a zero bin reported as 0. NaN and ±inf are
// ignored: Add cannot fail, and one such value would poison sum/min/max forever.
// count, sum, min and max are exact (sum up to floating-point addition order).
//
// At most kMaxBins (2048) bins: when a value would widen the range past that, the
// lowest bins fold into the lowest kept bin. The high quantiles that latency cares
// about keep their guarantee; quantiles whose rank lands in the folded bin are
// overestimated (but still clamped to [min, max]). 2048 bins at scale 6 span a
// factor of 2^32, e.g. 1 ns .. 4.3 s, before anything folds.
//
// The result of any sequence of Add/Merge depends only on the multiset of values:
// bins, count, min and max are identical whatever the order or split (the sum may
// differ in its last bits).
//
// Quantile rank convention (DataDog's "lower" rank): Quantile(q) estimates the value
// at 0-based position floor(q * (count - 1)) of the sorted values; it does not
// interpolate. Quantile(0) is min and Quantile(1) is max, exactly.
//
// Thread-safety: none. Keep one sketch per thread and merge.
//
// Example:
//   DDSketch s;
//   for (double ns : durations) s.Add(ns);
//   double p99 = s.Quantile(0.99);  // within kRelativeAccuracy of the true p99
//   std::string blob = s.Serialize();
#ifndef OPMAP_ANALYSIS_STATS_DDSKETCH_H_
#define OPMAP_ANALYSIS_STATS_DDSKETCH_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opmap::stats {

class DDSketch {
 public:
  static constexpr int kDefaultScale = 6;
  static constexpr int kMaxScale = 6;  // the boundary table has 2^6 entries
  static constexpr size_t kMaxBins = 2048;
  // α = (γ-1)/(γ+1) for γ = 2^(1/64), correctly rounded (computed at 60 digits).
  static constexpr double kRelativeAccuracy = 0x1.62e34c980baa4p-8;
  static constexpr uint8_t kFormatVersion = 1;

  // An empty sketch at kDefaultScale.
  DDSketch() = default;
  // An empty sketch at a coarser scale (0..6): fewer bins for a wider range, at
  // α = (γ-1)/(γ+1), γ = 2^(2^-scale). InvalidArgument outside 0..6.
  static absl::StatusOr<DDSketch> WithScale(int scale);

  // Rebuilds a sketch from parts stored elsewhere, e.g. a bins array column summed
  // server-side. Leading/trailing zero bins are trimmed and a span over kMaxBins is
  // folded as Add would. The parts must be consistent (min <= max, finite, the
  // zero bin and the bins agreeing with min and max); otherwise InvalidArgument.
  static absl::StatusOr<DDSketch> FromBins(int scale, int32_t offset,
                                           std::vector<uint64_t> bins,
                                           uint64_t zero_count, double sum,
                                           double min, double max);

  // Adds `count` occurrences of `v`. No allocation once the bin range is
  // established. Ignores NaN, ±inf and count == 0.
  void Add(double v, uint64_t count = 1);

  // Adds all of `other`'s values. InvalidArgument if the scales differ.
  absl::Status Merge(const DDSketch& other);

  // The q-quantile (see the rank convention above), clamped to [min, max]. NaN if
  // the sketch is empty or q is not in [0, 1].
  double Quantile(double q) const;

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  double sum() const { return sum_; }
  // NaN when empty.
  double min() const { return empty() ? kNaN : min_; }
  double max() const { return empty() ? kNaN : max_; }
  uint64_t zero_count() const { return zero_count_; }
  int scale() const { return scale_; }
  double relative_accuracy() const;

  // Dense bins: bins()[k] counts the values with index offset() + k. Empty when no
  // positive value was added; otherwise the first and last entries are non-zero.
  int32_t offset() const { return offset_; }
  const std::vector<uint64_t>& bins() const { return bins_; }

  // The bin index of a finite v > 0 at this sketch's scale; INT32_MIN for any other
  // v. Valid indices run from IndexOf(denorm_min) to IndexOf(DBL_MAX).
  int32_t IndexOf(double v) const;
  // The value reported for a bin: 2γ^(i+1)/(γ+1). Below DBL_MIN it loses precision
  // (subnormal) and for the top bin of the double range it may be inf; Quantile
  // clamps to [min, max], so neither reaches a caller through it.
  double BinValue(int32_t index) const;

  // Compact little-endian encoding; layout in analysis/stats/README.md. Deserialize
  // accepts only what Serialize produces (canonical, version kFormatVersion) and
  // names the byte offset of the first problem; it never crashes on any input.
  std::string Serialize() const;
  static absl::StatusOr<DDSketch> Deserialize(std::string_view data);

 private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  explicit DDSketch(int scale) : scale_(scale) {}

  void AddOutsideRange(int32_t index, uint64_t count);
  // Makes bins_ cover [new_offset, new_top], folding bins below new_offset into
  // it. Requires new_top >= the current top.
  void Reshape(int32_t new_offset, int32_t new_top);
  absl::Status CheckConsistent() const;

  int scale_ = kDefaultScale;
  uint64_t count_ = 0;
  uint64_t zero_count_ = 0;
  double sum_ = 0.0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
  int32_t offset_ = 0;
  std::vector<uint64_t> bins_;
};

}  // namespace opmap::stats

#endif  // OPMAP_ANALYSIS_STATS_DDSKETCH_H_
