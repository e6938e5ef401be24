// PartRanges: when a trace is summarized in parts (trace_parts.h), which of a part's ranges
// are which ranges of the whole trace. A range that spans a cut is in every part it
// overlaps, so that each part maps its launches and nests its ranges as the whole trace
// would; the accumulators count it once, in the last part it is in, with what the earlier
// parts added to it (its GPU time, its children's time).
#ifndef OPMAP_ANALYSIS_SUMMARY_PART_RANGES_H_
#define OPMAP_ANALYSIS_SUMMARY_PART_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace opmap::analysis {

struct PartRanges {
  std::vector<int64_t> id;         // per range of the part: its index in the whole trace
  std::vector<uint8_t> ends_here;  // per range: this is the last part that holds it

  // For a trace given whole (ranges == nullptr): a range is itself and ends here.
  static int64_t IdOf(const PartRanges* ranges, size_t i) {
    return ranges != nullptr ? ranges->id[i] : static_cast<int64_t>(i);
  }
  static bool EndsHere(const PartRanges* ranges, size_t i) {
    return ranges == nullptr || ranges->ends_here[i] != 0;
  }
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_PART_RANGES_H_
