#include "analysis/stats/value_counts.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opmap::stats {

void ValueCounts::Add(int64_t value, int64_t occurrences) {
  if (occurrences <= 0) return;
  count_ += occurrences;
  if (sketch_) {
    sketch_->Add(static_cast<double>(value), static_cast<uint64_t>(occurrences));
    return;
  }
  auto [it, inserted] = counts_.try_emplace(value, 0);
  it->second += occurrences;
  if (!inserted || budget_ == nullptr) return;
  if (value < 0) has_negative_ = true;
  if (budget_->Take()) return;
  if (has_negative_) {
    budget_->Force();
    return;
  }
  budget_->Force();  // the entry just added; TurnIntoSketch gives all of them back
  TurnIntoSketch();
}

void ValueCounts::TurnIntoSketch() {
  DDSketch sketch;
  for (const auto& [value, n] : counts_) {
    sketch.Add(static_cast<double>(value), static_cast<uint64_t>(n));
  }
  if (budget_ != nullptr) {
    budget_->Give(counts_.size());
    budget_->CountSketchedRow();
  }
  counts_ = {};
  sketch_ = std::move(sketch);
}

void ValueCounts::Merge(const ValueCounts& other) {
  if (other.sketch_) {
    if (!sketch_) TurnIntoSketch();
    count_ += other.count_;
    // Both sketches are at the default scale, so Merge cannot fail.
    (void)sketch_->Merge(*other.sketch_);
    return;
  }
  for (const auto& [value, n] : other.counts_) Add(value, n);
}

std::vector<std::pair<int64_t, int64_t>> ValueCounts::Sorted() const {
  std::vector<std::pair<int64_t, int64_t>> out(counts_.begin(), counts_.end());
  std::sort(out.begin(), out.end());
  return out;
}

double QuantileOfSorted(const std::vector<std::pair<int64_t, int64_t>>& sorted, int64_t count,
                        double q) {
  if (count <= 0 || !(q >= 0.0 && q <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  const double h = static_cast<double>(count - 1) * q;
  const double lo = std::floor(h);
  const int64_t i = static_cast<int64_t>(lo);
  const int64_t j = std::min(i + 1, count - 1);
  // The values at ranks i and j (0-based), walking the cumulative occurrences.
  double at_i = 0, at_j = 0;
  int64_t seen = 0;
  bool found_i = false;
  for (const auto& [value, n] : sorted) {
    seen += n;
    if (!found_i && i < seen) {
      at_i = static_cast<double>(value);
      found_i = true;
    }
    if (j < seen) {
      at_j = static_cast<double>(value);
      break;
    }
  }
  return Lerp(at_i, at_j, h - lo);
}

double ValueCounts::Quantile(double q) const {
  if (sketch_) return sketch_->Quantile(q);
  return QuantileOfSorted(Sorted(), count_, q);
}

Percentiles ValueCounts::ToPercentiles() const {
  if (sketch_) {
    return Percentiles{sketch_->Quantile(0.50), sketch_->Quantile(0.95), sketch_->Quantile(0.99),
                       true};
  }
  const std::vector<std::pair<int64_t, int64_t>> sorted = Sorted();
  return Percentiles{QuantileOfSorted(sorted, count_, 0.50), QuantileOfSorted(sorted, count_, 0.95),
                     QuantileOfSorted(sorted, count_, 0.99)};
}

}  // namespace opmap::stats
