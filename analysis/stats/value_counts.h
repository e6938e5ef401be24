// ValueCounts: an exact multiset of int64 values (value -> occurrences) that merges, with
// the quantiles of quantiles.h over it: Quantile(q) equals ExactQuantile over the values
// written out one by one. Memory grows with the distinct values, not the occurrences, so
// the durations of a trace repeated N times cost what one copy costs.
//
// Under a ValueBudget shared by many rows, a row whose next distinct value would pass
// the budget turns into a DDSketch (relative accuracy 0.54%, ddsketch.h) and gives its
// entries back; sketched() says so, and reports must print it beside the row. Rows that
// hold negative values stay exact (the sketch holds only values >= 0): they count against
// the budget without ever being turned.
//
// Thread-safety: none (one accumulator, one thread).
#ifndef OPMAP_ANALYSIS_STATS_VALUE_COUNTS_H_
#define OPMAP_ANALYSIS_STATS_VALUE_COUNTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/stats/quantiles.h"

namespace opmap::stats {

// Distinct values all rows of one summary may keep exactly. Entries cost about 32 bytes
// each (a hash slot of two int64 plus control bytes and load-factor slack).
class ValueBudget {
 public:
  static constexpr size_t kBytesPerEntry = 32;
  explicit ValueBudget(size_t max_entries) : max_entries_(max_entries) {}
  static ValueBudget FromBytes(uint64_t bytes) {
    return ValueBudget(static_cast<size_t>(bytes / kBytesPerEntry));
  }

  bool Take() {
    if (used_ >= max_entries_) return false;
    ++used_;
    return true;
  }
  void Force() { ++used_; }  // rows that cannot be sketched
  void Give(size_t n) { used_ -= n < used_ ? n : used_; }
  size_t used() const { return used_; }
  size_t max_entries() const { return max_entries_; }
  int64_t rows_sketched() const { return rows_sketched_; }
  void CountSketchedRow() { ++rows_sketched_; }

 private:
  size_t max_entries_;
  size_t used_ = 0;
  int64_t rows_sketched_ = 0;
};

class ValueCounts {
 public:
  // Without a budget the row stays exact whatever it holds.
  explicit ValueCounts(ValueBudget* budget = nullptr) : budget_(budget) {}
  ValueCounts(ValueCounts&&) = default;
  ValueCounts& operator=(ValueCounts&&) = default;
  ValueCounts(const ValueCounts&) = delete;
  ValueCounts& operator=(const ValueCounts&) = delete;

  void Add(int64_t value, int64_t occurrences = 1);
  // Adds every value of `other` (exact or sketched) to this row.
  void Merge(const ValueCounts& other);

  int64_t count() const { return count_; }
  size_t distinct() const { return counts_.size(); }
  bool sketched() const { return sketch_.has_value(); }
  // The sum of the values, once sketched (the sketch keeps it); 0 while exact.
  double sketch_sum() const { return sketch_ ? sketch_->sum() : 0.0; }

  // The values in ascending order with their occurrences; empty once sketched.
  std::vector<std::pair<int64_t, int64_t>> Sorted() const;
  // ExactQuantile over the values (or the sketch's quantile once sketched); NaN when
  // the row is empty or q is outside [0, 1].
  double Quantile(double q) const;
  // p50/p95/p99, with Percentiles::sketched set when the row was sketched.
  Percentiles ToPercentiles() const;

 private:
  void TurnIntoSketch();

  ValueBudget* budget_ = nullptr;
  absl::flat_hash_map<int64_t, int64_t> counts_;
  std::optional<DDSketch> sketch_;
  int64_t count_ = 0;
  bool has_negative_ = false;
};

// ExactQuantile over a sorted (value, occurrences) list, as if the values were written
// out one by one.
double QuantileOfSorted(const std::vector<std::pair<int64_t, int64_t>>& sorted, int64_t count,
                        double q);

}  // namespace opmap::stats

#endif  // OPMAP_ANALYSIS_STATS_VALUE_COUNTS_H_
