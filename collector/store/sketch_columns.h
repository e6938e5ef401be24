// How the store keeps a DDSketch: its parts in columns (scale, offset, zero count, sum,
// min, max) and the dense bins as a blob of LEB128 varints preceded by their number.
// The same parts DDSketch::FromBins takes, and what a ClickHouse store would keep as an
// Array(UInt32) column merged server-side with sumForEach.
//
// Why not DDSketch::Serialize: a latency query merges every selected rollup row's sketch
// (30k rows for 10 M kernels), and decoding straight into a group's dense bin array is
// several times cheaper than building a DDSketch per row and merging it (measured:
// Deserialize + Merge were ~55% of a 360 ms query; see tests/unit/store/store_bench_test.cc).
//
// Thread-compatible.
#ifndef OPMAP_COLLECTOR_STORE_SKETCH_COLUMNS_H_
#define OPMAP_COLLECTOR_STORE_SKETCH_COLUMNS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/stats/ddsketch.h"

namespace opmap::collector {

// The varint blob of `sketch`'s bins: count, then each bin.
std::string EncodeSketchBins(const stats::DDSketch& sketch);

// One stored sketch's columns; views valid while the caller's row is.
struct StoredSketch {
  int scale = stats::DDSketch::kDefaultScale;
  int32_t offset = 0;
  std::string_view bins;  // EncodeSketchBins
  uint64_t zero_count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

// Merges stored sketches of one scale into dense bins; Finish gives the DDSketch of
// everything added (identical to merging the original sketches with DDSketch::Merge).
class SketchAccumulator {
 public:
  // DataLoss when the blob is malformed or its bin range is implausible;
  // InvalidArgument when the scale differs from the sketches added before.
  absl::Status Add(const StoredSketch& s);
  // Adds decoded parts: bins[k] counts bin index offset + k (e.g. bins merged
  // server-side by another engine). The same checks and result as Add.
  absl::Status AddBins(int scale, int64_t offset, const std::vector<uint64_t>& bins,
                       uint64_t zero_count, double sum, double min, double max);

  absl::StatusOr<stats::DDSketch> Finish() const;
  uint64_t count() const { return count_; }

 private:
  // Checks the scale and index range and widens bins_ to cover [lo, lo + n); returns
  // where index lo lives.
  absl::StatusOr<uint64_t*> Widen(int scale, int64_t lo, uint64_t n);
  void AddTotals(int scale, uint64_t total, uint64_t zero_count, double sum, double min,
                 double max);

  int scale_ = -1;  // none added yet
  int32_t offset_ = 0;
  std::vector<uint64_t> bins_;
  uint64_t zero_count_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SKETCH_COLUMNS_H_
