#include "collector/store/sketch_columns.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace opmap::collector {
namespace {

// Bin indices of positive doubles at scale 6 lie within about ±69000 (denorm_min to
// DBL_MAX); anything outside this bound is a damaged row, not a value.
constexpr int64_t kIndexBound = int64_t{1} << 17;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// False when the input ends inside the varint or it is longer than 10 bytes.
inline bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string EncodeSketchBins(const stats::DDSketch& sketch) {
  std::string out;
  out.reserve(2 + sketch.bins().size() * 2);
  PutVarint(out, sketch.bins().size());
  for (uint64_t b : sketch.bins()) PutVarint(out, b);
  return out;
}

absl::StatusOr<uint64_t*> SketchAccumulator::Widen(int scale, int64_t lo, uint64_t n) {
  if (scale_ >= 0 && scale != scale_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sketches of scales %d and %d can't be merged", scale_, scale));
  }
  if (n == 0) return nullptr;
  const int64_t hi = lo + static_cast<int64_t>(n) - 1;
  if (lo < -kIndexBound || hi > kIndexBound) {
    return absl::DataLossError(absl::StrFormat("sketch bins: offset %d out of range", lo));
  }
  if (bins_.empty()) {
    offset_ = static_cast<int32_t>(lo);
    bins_.assign(n, 0);
  } else {
    // Widen the dense range to cover this sketch's bins.
    const int64_t top = offset_ + static_cast<int64_t>(bins_.size()) - 1;
    const int64_t new_lo = std::min<int64_t>(lo, offset_);
    const int64_t new_hi = std::max(hi, top);
    if (new_lo < offset_) {
      bins_.insert(bins_.begin(), static_cast<size_t>(offset_ - new_lo), 0);
      offset_ = static_cast<int32_t>(new_lo);
    }
    bins_.resize(static_cast<size_t>(new_hi - offset_ + 1), 0);
  }
  return bins_.data() + (lo - offset_);
}

void SketchAccumulator::AddTotals(int scale, uint64_t total, uint64_t zero_count, double sum,
                                  double min, double max) {
  scale_ = scale;
  if (total == 0) return;
  min_ = count_ == 0 ? min : std::min(min_, min);
  max_ = count_ == 0 ? max : std::max(max_, max);
  count_ += total;
  zero_count_ += zero_count;
  sum_ += sum;
}

absl::Status SketchAccumulator::Add(const StoredSketch& s) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.bins.data());
  const uint8_t* const end = p + s.bins.size();
  uint64_t n = 0;
  if (!ReadVarint(p, end, n)) return absl::DataLossError("sketch bins: truncated bin count");
  if (n > stats::DDSketch::kMaxBins) {
    return absl::DataLossError(absl::StrFormat("sketch bins: %d bins > %d", n,
                                               stats::DDSketch::kMaxBins));
  }
  absl::StatusOr<uint64_t*> dst = Widen(s.scale, s.offset, n);
  if (!dst.ok()) return dst.status();
  uint64_t total = s.zero_count;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    // Most bins of one row hold < 128 values: one byte, no loop.
    if (p < end && *p < 0x80) {
      v = *p++;
    } else if (!ReadVarint(p, end, v)) {
      return absl::DataLossError("sketch bins: truncated bin");
    }
    (*dst)[i] += v;
    total += v;
  }
  if (p != end) return absl::DataLossError("sketch bins: trailing bytes");
  AddTotals(s.scale, total, s.zero_count, s.sum, s.min, s.max);
  return absl::OkStatus();
}

absl::Status SketchAccumulator::AddBins(int scale, int64_t offset,
                                        const std::vector<uint64_t>& bins,
                                        uint64_t zero_count, double sum, double min,
                                        double max) {
  absl::StatusOr<uint64_t*> dst = Widen(scale, offset, bins.size());
  if (!dst.ok()) return dst.status();
  uint64_t total = zero_count;
  for (size_t i = 0; i < bins.size(); ++i) {
    (*dst)[i] += bins[i];
    total += bins[i];
  }
  AddTotals(scale, total, zero_count, sum, min, max);
  return absl::OkStatus();
}

absl::StatusOr<stats::DDSketch> SketchAccumulator::Finish() const {
  if (count_ == 0) {
    if (scale_ < 0) return stats::DDSketch();
    return stats::DDSketch::WithScale(scale_);
  }
  // FromBins trims zero bins at the ends, folds a span over kMaxBins as Add would and
  // checks the parts agree (e.g. min/max with the bins).
  return stats::DDSketch::FromBins(scale_, offset_, bins_, zero_count_, sum_, min_, max_);
}

}  // namespace opmap::collector
