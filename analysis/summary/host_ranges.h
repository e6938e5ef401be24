// HostRangeSummary: where the host's time goes by operator and layer type, from host
// ranges alone (NVTX ranges of a live capture, or any trace's operator ranges). This is
// what a capture without GPU activity — the CPU demo workload, a process on a machine
// without a GPU — can still say, and what `opmap attach` prints per operator.
//
// Self time: a range's duration minus the durations of the ranges directly nested in it
// on the same thread (proper nesting: a child starts and ends inside its parent). The
// self times of one thread add up to the time covered by its outermost ranges, so shares
// of self time never double count a layer and the operators inside it.
// Layer type: docs/metrics.md's operator-name table; a range that matches no row is "other"
// (host ranges carry no kernels to vote with).
#ifndef OPMAP_ANALYSIS_SUMMARY_HOST_RANGES_H_
#define OPMAP_ANALYSIS_SUMMARY_HOST_RANGES_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/model/trace.h"
#include "analysis/stats/quantiles.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/part_ranges.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

struct HostRangeStats {
  std::string name;
  LayerType layer_type = LayerType::kOther;
  int64_t count = 0;
  int64_t total_ns = 0;                // inclusive
  int64_t self_ns = 0;                 // exclusive of directly nested ranges
  stats::Percentiles duration_ns;      // exact, over inclusive durations
  int64_t flops = kNone;               // summed shape payloads; kNone when none carried one
  int64_t bytes = kNone;
  double self_share = 0;               // of all ranges' self time
};

struct HostLayerTypeStats {
  LayerType layer_type = LayerType::kOther;
  int64_t count = 0;
  int64_t self_ns = 0;
  double self_share = 0;
};

struct HostRangeSummary {
  int64_t range_count = 0;
  int64_t thread_count = 0;
  int64_t self_ns = 0;  // all ranges
  std::vector<HostRangeStats> ranges;            // self time, descending; ties by name
  std::vector<HostLayerTypeStats> layer_types;   // self time, descending
};

// Ranges of every kind in `trace`; an empty trace gives an empty summary.
// Per range (index into trace.ranges): its parent, the innermost range on its (process,
// thread) that wholly contains it, or -1; and the number of threads with ranges.
// `order`, when given, receives the range indices in the order swept: by (process, thread),
// then start, longer first on ties.
std::vector<int32_t> RangeParents(const Trace& trace, int64_t* thread_count,
                                  std::vector<uint32_t>* order = nullptr);

// The summary over a trace given whole or in parts (part_ranges.h): a range is counted in
// the part it ends in, its self time less the children of every part.
class HostRangeAccumulator {
 public:
  explicit HostRangeAccumulator(stats::ValueBudget* budget = nullptr) : budget_(budget) {}
  void Add(const Trace& part, const PartRanges* ranges);
  // The same with the part's RangeParents already computed.
  void Add(const Trace& part, const PartRanges* ranges, const std::vector<int32_t>& parent,
           int64_t threads);
  HostRangeSummary Finish() const;

 private:
  struct Row {
    HostRangeStats stats;
    stats::ValueCounts durations;
  };
  stats::ValueBudget* budget_;
  std::vector<Row> rows_;
  absl::flat_hash_map<std::string, size_t> index_;
  // Ranges not yet ended: the time of their children that ended in earlier parts.
  absl::flat_hash_map<int64_t, int64_t> open_children_ns_;
  absl::flat_hash_set<std::pair<int64_t, int64_t>> threads_;
  int64_t range_count_ = 0;
  int64_t self_ns_ = 0;
};

HostRangeSummary SummarizeHostRanges(const Trace& trace);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_HOST_RANGES_H_
