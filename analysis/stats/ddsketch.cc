#include "analysis/stats/ddsketch.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/little_endian.h"

namespace opmap::stats {
namespace {

// kBoundary[k] = 2^(k/64), correctly rounded (computed with Python's decimal at 60
// digits). Literals rather than std::exp2 so that every libm bins identically.
constexpr std::array<double, 65> kBoundary = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0,
    0x1.0874518759bc8p+0, 0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0,
    0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0, 0x1.172b83c7d517bp+0,
    0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0,
    0x1.2d285a6e4030bp+0, 0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0,
    0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0, 0x1.3dea64c123422p+0,
    0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0,
    0x1.56f4736b527dap+0, 0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0,
    0x1.6247eb03a5585p+0, 0x1.6623882552225p+0, 0x1.6a09e667f3bcdp+0,
    0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0,
    0x1.868d99b4492edp+0, 0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0,
    0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0, 0x1.9c49182a3f090p+0,
    0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0,
    0x1.bcc1e904bc1d2p+0, 0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0,
    0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0, 0x1.d5818dcfba487p+0,
    0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0,
    0x1.fa7c1819e90d8p+0, 0x1.0000000000000p+1,
};

constexpr uint64_t kMantissaMask = (uint64_t{1} << 52) - 1;
constexpr int kCellBits = 8;  // top mantissa bits used for the first guess
constexpr int kCellShift = 52 - kCellBits;

// The 52 mantissa bits of each boundary; 2.0 is 1 << 52 so comparisons stay in
// [1, 2).
constexpr std::array<uint64_t, 65> kBoundaryMantissa = [] {
  std::array<uint64_t, 65> m{};
  for (int k = 0; k < 64; ++k) m[k] = std::bit_cast<uint64_t>(kBoundary[k]) & kMantissaMask;
  m[64] = uint64_t{1} << 52;
  return m;
}();

// kCellStart[c] = the largest k with boundary k below the start of mantissa cell c
// (c = top 8 mantissa bits). Boundaries are at least 0.0108 apart and cells 1/256
// wide, so a cell holds at most one boundary and one compare finishes the job.
constexpr std::array<uint8_t, 1 << kCellBits> kCellStart = [] {
  std::array<uint8_t, 1 << kCellBits> t{};
  for (uint64_t c = 1; c < t.size(); ++c) {
    uint8_t k = 0;
    while (kBoundaryMantissa[k + 1] < (c << kCellShift)) ++k;
    t[c] = k;
  }
  return t;
}();

// ceil(log2(v) * 64) - 1 for finite v > 0, against the rounded boundaries. Not
// recursive, so that it inlines into Add.
inline int32_t Index6(double v) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  int32_t base = -1023 * 64;
  if ((bits >> 52) == 0) [[unlikely]] {
    // Subnormal: scaling by 2^64 is exact and makes it normal.
    bits = std::bit_cast<uint64_t>(v * 0x1p64);
    base -= 64 * 64;
  }
  base += static_cast<int32_t>(bits >> 52) * 64;
  const uint64_t mant = bits & kMantissaMask;
  if (mant == 0) return base - 1;  // a power of two closes the bin below it
  const int k = kCellStart[mant >> kCellShift];
  return base + k + (mant > kBoundaryMantissa[k + 1] ? 1 : 0);
}

// 2γ/(γ+1) per scale: the point of (L, γL] at relative distance α from both ends.
constexpr std::array<double, 7> kBinValueFactor = [] {
  std::array<double, 7> f{};
  for (int s = 0; s <= 6; ++s) {
    const double g = kBoundary[1 << (6 - s)];
    f[s] = 2 * g / (g + 1);
  }
  return f;
}();

constexpr int64_t kMaxSpan = static_cast<int64_t>(DDSketch::kMaxBins);

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutDouble(std::string& out, double d) { base::PutU64LE(&out, std::bit_cast<uint64_t>(d)); }

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ (v < 0 ? ~uint64_t{0} : 0); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// Bounds-checked reader; every failure names the byte where it happened.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  absl::Status Error(size_t at, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("DDSketch::Deserialize: %s at byte %d", what, at));
  }
  absl::Status Byte(uint8_t& out) {
    if (pos_ >= data_.size()) return Error(pos_, "truncated input");
    out = static_cast<uint8_t>(data_[pos_++]);
    return absl::OkStatus();
  }
  // Canonical LEB128 only (no overlong forms), so a blob has one encoding.
  absl::Status Varint(uint64_t& out) {
    const size_t start = pos_;
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Error(start, "truncated varint");
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      if (shift == 63 && b > 1) return Error(start, "varint overflows 64 bits");
      out |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return Error(start, "overlong varint");
        return absl::OkStatus();
      }
    }
    return Error(start, "varint overflows 64 bits");
  }
  absl::Status Double(double& out) {
    if (data_.size() - pos_ < 8) return Error(pos_, "truncated double");
    out = std::bit_cast<double>(base::GetU64LE(data_, pos_));
    pos_ += 8;
    return absl::OkStatus();
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<DDSketch> DDSketch::WithScale(int scale) {
  if (scale < 0 || scale > kMaxScale) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DDSketch: scale %d not in [0, %d]", scale, kMaxScale));
  }
  return DDSketch(scale);
}

int32_t DDSketch::IndexOf(double v) const {
  if (!(v > 0.0) || !std::isfinite(v)) return std::numeric_limits<int32_t>::min();
  return Index6(v) >> (kMaxScale - scale_);
}

double DDSketch::BinValue(int32_t index) const {
  const int32_t e = index >> scale_;  // floor division, also for negative indices
  const int32_t k = index & ((1 << scale_) - 1);
  return std::ldexp(kBoundary[k << (kMaxScale - scale_)], e) * kBinValueFactor[scale_];
}

double DDSketch::relative_accuracy() const {
  if (scale_ == kDefaultScale) return kRelativeAccuracy;
  const double g = kBoundary[1 << (kMaxScale - scale_)];
  return (g - 1) / (g + 1);
}

void DDSketch::Add(double v, uint64_t count) {
  if (count == 0 || !std::isfinite(v)) return;
  count_ += count;
  sum_ += v * static_cast<double>(count);
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
  if (v <= 0.0) {
    zero_count_ += count;
    return;
  }
  const int32_t index = Index6(v) >> (kMaxScale - scale_);
  const int64_t pos = int64_t{index} - offset_;
  if (pos >= 0 && pos < static_cast<int64_t>(bins_.size())) {
    bins_[static_cast<size_t>(pos)] += count;
    return;
  }
  AddOutsideRange(index, count);
}

void DDSketch::AddOutsideRange(int32_t index, uint64_t count) {
  if (bins_.empty()) {
    offset_ = index;
    bins_.assign(1, count);
    return;
  }
  const int32_t top = offset_ + static_cast<int32_t>(bins_.size()) - 1;
  if (index > top) {
    Reshape(static_cast<int32_t>(std::max<int64_t>(offset_, index - kMaxSpan + 1)), index);
  } else {
    Reshape(static_cast<int32_t>(std::max<int64_t>(index, top - kMaxSpan + 1)), top);
  }
  bins_[static_cast<size_t>(std::max(index, offset_) - offset_)] += count;
}

void DDSketch::Reshape(int32_t new_offset, int32_t new_top) {
  const int64_t shift = int64_t{new_offset} - offset_;
  if (bins_.empty()) {
    bins_.assign(static_cast<size_t>(int64_t{new_top} - new_offset + 1), 0);
  } else if (shift > 0) {
    // Fold: everything below new_offset lands in the lowest kept bin.
    const size_t n = std::min(static_cast<size_t>(shift), bins_.size());
    uint64_t folded = 0;
    for (size_t i = 0; i < n; ++i) folded += bins_[i];
    if (n < bins_.size()) {
      bins_[n] += folded;
      bins_.erase(bins_.begin(), bins_.begin() + static_cast<ptrdiff_t>(n));
    } else {
      bins_.assign(1, folded);
    }
  } else if (shift < 0) {
    bins_.insert(bins_.begin(), static_cast<size_t>(-shift), 0);
  }
  offset_ = new_offset;
  bins_.resize(static_cast<size_t>(int64_t{new_top} - new_offset + 1), 0);
}

absl::Status DDSketch::Merge(const DDSketch& other) {
  if (other.scale_ != scale_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DDSketch::Merge: scale %d differs from this sketch's %d", other.scale_, scale_));
  }
  if (other.count_ == 0) return absl::OkStatus();
  if (&other == this) {
    const DDSketch copy = other;
    return Merge(copy);
  }
  count_ += other.count_;
  zero_count_ += other.zero_count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  if (other.bins_.empty()) return absl::OkStatus();
  if (bins_.empty()) {
    offset_ = other.offset_;
    bins_ = other.bins_;
    return absl::OkStatus();
  }
  const int64_t other_top = int64_t{other.offset_} + static_cast<int64_t>(other.bins_.size()) - 1;
  const int64_t top = std::max<int64_t>(offset_ + static_cast<int64_t>(bins_.size()) - 1, other_top);
  const int64_t low = std::min(offset_, other.offset_);
  Reshape(static_cast<int32_t>(std::max(low, top - kMaxSpan + 1)), static_cast<int32_t>(top));
  for (size_t k = 0; k < other.bins_.size(); ++k) {
    const int32_t index = std::max(other.offset_ + static_cast<int32_t>(k), offset_);
    bins_[static_cast<size_t>(index - offset_)] += other.bins_[k];
  }
  return absl::OkStatus();
}

double DDSketch::Quantile(double q) const {
  if (count_ == 0 || !(q >= 0.0 && q <= 1.0)) return kNaN;
  const double rank = q * static_cast<double>(count_ - 1);
  // Position floor(rank) is 0 or count-1: the exact extremes are known.
  if (rank < 1.0) return min_;
  if (rank >= static_cast<double>(count_ - 1)) return max_;
  if (rank < static_cast<double>(zero_count_)) return std::clamp(0.0, min_, max_);
  uint64_t running = zero_count_;
  for (size_t i = 0; i < bins_.size(); ++i) {
    running += bins_[i];
    if (static_cast<double>(running) > rank) {
      return std::clamp(BinValue(offset_ + static_cast<int32_t>(i)), min_, max_);
    }
  }
  return max_;  // unreachable while bins and zero_count sum to count
}

std::string DDSketch::Serialize() const {
  std::string out;
  out.reserve(40 + bins_.size() * 2);
  out.push_back(static_cast<char>(kFormatVersion));
  out.push_back(static_cast<char>(scale_));
  PutVarint(out, count_);
  if (count_ == 0) return out;
  PutVarint(out, zero_count_);
  PutDouble(out, sum_);
  PutDouble(out, min_);
  PutDouble(out, max_);
  PutVarint(out, ZigZag(offset_));
  PutVarint(out, bins_.size());
  for (uint64_t b : bins_) PutVarint(out, b);
  return out;
}

// Invariants that Add/Merge keep; checked on anything that did not come from them.
absl::Status DDSketch::CheckConsistent() const {
  auto fail = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("inconsistent sketch: ", what));
  };
  if (!std::isfinite(min_) || !std::isfinite(max_) || min_ > max_) {
    return fail("min/max not finite or min > max");
  }
  if (std::isnan(sum_)) return fail("sum is NaN");
  if ((zero_count_ > 0) != (min_ <= 0.0)) return fail("zero bin disagrees with min");
  if (bins_.empty() != (max_ <= 0.0)) return fail("bins disagree with max");
  if (bins_.empty()) return absl::OkStatus();
  if (bins_.front() == 0 || bins_.back() == 0) return fail("zero bin at an end of the bins");
  const int64_t top = int64_t{offset_} + static_cast<int64_t>(bins_.size()) - 1;
  if (IndexOf(max_) != top) return fail("max is not in the top bin");
  if (min_ > 0.0) {
    const int32_t min_index = IndexOf(min_);
    const bool folded = min_index < offset_ && bins_.size() == kMaxBins;
    if (min_index != offset_ && !folded) return fail("min is not in the lowest bin");
  }
  return absl::OkStatus();
}

absl::StatusOr<DDSketch> DDSketch::FromBins(int scale, int32_t offset,
                                            std::vector<uint64_t> bins,
                                            uint64_t zero_count, double sum, double min,
                                            double max) {
  auto sketch_or = WithScale(scale);
  if (!sketch_or.ok()) return sketch_or.status();
  DDSketch s = *std::move(sketch_or);
  size_t first = 0;
  while (first < bins.size() && bins[first] == 0) ++first;
  size_t last = bins.size();
  while (last > first && bins[last - 1] == 0) --last;
  uint64_t count = zero_count;
  for (size_t i = first; i < last; ++i) {
    if (__builtin_add_overflow(count, bins[i], &count)) {
      return absl::InvalidArgumentError("DDSketch::FromBins: count overflows 64 bits");
    }
  }
  if (count == 0) return s;
  if (first < last) {
    const int64_t lo = int64_t{offset} + static_cast<int64_t>(first);
    const int64_t hi = int64_t{offset} + static_cast<int64_t>(last) - 1;
    if (lo < s.IndexOf(std::numeric_limits<double>::denorm_min()) ||
        hi > s.IndexOf(std::numeric_limits<double>::max())) {
      return absl::InvalidArgumentError("DDSketch::FromBins: bins outside the double range");
    }
    // Fold a span wider than kMaxBins exactly as Add would have.
    const int64_t keep_lo = std::max(lo, hi - kMaxSpan + 1);
    s.offset_ = static_cast<int32_t>(keep_lo);
    s.bins_.assign(static_cast<size_t>(hi - keep_lo + 1), 0);
    for (size_t i = first; i < last; ++i) {
      const int64_t index = std::max(int64_t{offset} + static_cast<int64_t>(i), keep_lo);
      s.bins_[static_cast<size_t>(index - keep_lo)] += bins[i];
    }
  }
  s.count_ = count;
  s.zero_count_ = zero_count;
  s.sum_ = sum;
  s.min_ = min;
  s.max_ = max;
  if (absl::Status st = s.CheckConsistent(); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("DDSketch::FromBins: ", st.message()));
  }
  return s;
}

absl::StatusOr<DDSketch> DDSketch::Deserialize(std::string_view data) {
  Reader r(data);
  uint8_t version = 0, scale = 0;
  if (absl::Status st = r.Byte(version); !st.ok()) return st;
  if (version != kFormatVersion) return r.Error(0, absl::StrFormat("unsupported version %d", version));
  if (absl::Status st = r.Byte(scale); !st.ok()) return st;
  if (scale > kMaxScale) return r.Error(1, absl::StrFormat("scale %d not in [0, %d]", scale, kMaxScale));
  DDSketch s(scale);
  const size_t count_pos = r.pos();
  uint64_t count = 0, zero_count = 0, zz_offset = 0, nbins = 0;
  if (absl::Status st = r.Varint(count); !st.ok()) return st;
  if (count == 0) {
    if (!r.at_end()) return r.Error(r.pos(), "trailing bytes");
    return s;
  }
  if (absl::Status st = r.Varint(zero_count); !st.ok()) return st;
  const size_t stats_pos = r.pos();
  if (absl::Status st = r.Double(s.sum_); !st.ok()) return st;
  if (absl::Status st = r.Double(s.min_); !st.ok()) return st;
  if (absl::Status st = r.Double(s.max_); !st.ok()) return st;
  const size_t offset_pos = r.pos();
  if (absl::Status st = r.Varint(zz_offset); !st.ok()) return st;
  const int64_t offset = UnZigZag(zz_offset);
  const size_t nbins_pos = r.pos();
  if (absl::Status st = r.Varint(nbins); !st.ok()) return st;
  if (nbins > kMaxBins) return r.Error(nbins_pos, absl::StrFormat("%d bins > %d", nbins, kMaxBins));
  if (nbins > 0 && (offset < s.IndexOf(std::numeric_limits<double>::denorm_min()) ||
                    offset + static_cast<int64_t>(nbins) - 1 >
                        s.IndexOf(std::numeric_limits<double>::max()))) {
    return r.Error(offset_pos, "bin offset outside the double range");
  }
  s.offset_ = nbins > 0 ? static_cast<int32_t>(offset) : 0;
  if (nbins == 0 && offset != 0) return r.Error(offset_pos, "non-zero offset without bins");
  s.bins_.resize(nbins);
  uint64_t total = zero_count;
  for (uint64_t& b : s.bins_) {
    const size_t bin_pos = r.pos();
    if (absl::Status st = r.Varint(b); !st.ok()) return st;
    if (__builtin_add_overflow(total, b, &total)) return r.Error(bin_pos, "count overflows 64 bits");
    if (b == 0 && (&b == &s.bins_.front() || &b == &s.bins_.back())) {
      return r.Error(bin_pos, "zero bin at an end of the bins");
    }
  }
  if (!r.at_end()) return r.Error(r.pos(), "trailing bytes");
  if (total != count) return r.Error(count_pos, "count differs from the sum of the bins");
  s.count_ = count;
  s.zero_count_ = zero_count;
  if (absl::Status st = s.CheckConsistent(); !st.ok()) return r.Error(stats_pos, st.message());
  return s;
}

}  // namespace opmap::stats
