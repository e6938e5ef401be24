// SummaryAccumulator: the TraceSummary of a trace given whole or in parts, the parts in time
// order (trace_parts.h says what a valid cut is: no GPU event, API call or launch-to-kernel
// link spans it; ranges that span it are in every part they overlap, part_ranges.h). Every
// count and sum equals the whole trace's, and percentiles stay exact while the distinct
// values fit the ValueBudget (a row past it is sketched and says so).
//
// What it keeps grows with distinct names and values, the ranges still open and the
// streams, not with events. Decisions that need the whole trace wait for Finish: an
// operator's layer type by the majority of its kernels' GPU time, and through it each
// event's, each kernel's and each layer type's totals.
//
// Warp-stall samples and the per-launch list are not accumulated: Summarize adds them from
// a whole trace.
#ifndef OPMAP_ANALYSIS_SUMMARY_SUMMARY_ACCUMULATOR_H_
#define OPMAP_ANALYSIS_SUMMARY_SUMMARY_ACCUMULATOR_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/part_ranges.h"
#include "analysis/summary/request_breakdown.h"
#include "analysis/summary/trace_summary.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "analysis/timeline/device_breakdown.h"
#include "analysis/timeline/idle_time.h"
#include "analysis/timeline/launch_stats.h"

namespace opmap::analysis {

class SummaryAccumulator {
 public:
  // Without a budget every percentile is exact.
  explicit SummaryAccumulator(stats::ValueBudget* budget = nullptr);

  // `mapping` is MapGpuEvents(part); `ranges` nullptr when the part is the whole trace.
  void Add(const Trace& part, const MappingResult& mapping, const PartRanges* ranges = nullptr);

  // Everything but the stall sections and `launches`; `info` is the source's.
  TraceSummary Finish(TraceInfo info);

 private:
  struct OperatorRow {
    OperatorStats stats;
    stats::ValueCounts instance_times;
    LayerTimes kernel_types = {};   // GPU time by the kernels' own name types
    int64_t event_count = 0;        // GPU events mapped to it (typed by its layer type)
    int64_t event_time_ns = 0;
  };
  struct KernelRow {
    KernelStats stats;
    stats::ValueCounts durations;
    LayerTimes unmapped_types = {};  // time of its unmapped events, by its name's type
  };
  struct Instance {
    size_t row = 0;
    int64_t gpu_time_ns = 0;
    int64_t kernels = 0;
  };
  size_t OperatorRowOf(std::string_view name);
  size_t KernelRowOf(std::string_view name);
  void CloseInstance(const Instance& instance);

  stats::ValueBudget* budget_;
  LayerClassifier classifier_;
  std::vector<OperatorRow> operators_;
  absl::flat_hash_map<std::string, size_t> operator_index_;
  std::vector<KernelRow> kernels_;
  absl::flat_hash_map<std::string, size_t> kernel_index_;
  // Mapped GPU time per (kernel row, operator row): a kernel's layer type is the type
  // holding most of its time, and a mapped event has its operator's type.
  absl::flat_hash_map<std::pair<size_t, size_t>, int64_t> kernel_operator_time_;
  absl::flat_hash_map<int64_t, Instance> open_instances_;  // operator ranges not yet ended
  // Compute or not, by (kernel name, is a memcpy/memset event): docs/metrics.md.
  absl::flat_hash_map<std::pair<std::string, bool>, bool> compute_by_name_;
  std::array<int64_t, kNumLayerTypes> unmapped_count_ = {};
  LayerTimes unmapped_time_ = {};

  int64_t gpu_event_count_ = 0;
  int64_t gpu_time_ns_ = 0;
  std::array<int64_t, kMappingRuleCount> by_rule_ = {};
  std::array<int64_t, kUnmappedReasonCount> unmapped_by_reason_ = {};
  int64_t source_operator_ = 0;
  int64_t source_kernel_name_ = 0;
  DeviceBreakdownAccumulator devices_;
  IdleTimeAccumulator idle_;
  LaunchStatsAccumulator launches_;
  HostRangeAccumulator host_;
  ModuleAccumulator modules_;
  RequestBreakdownAccumulator requests_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_SUMMARY_ACCUMULATOR_H_
