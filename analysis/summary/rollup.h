// Rollups: what the collector keeps of a capture session after its raw events expire —
// mergeable DDSketches (analysis/stats/ddsketch.h) of kernel durations and of operator
// instances' GPU time, keyed by (layer type, operator, kernel), plus the per-device time
// breakdown. Built from the same mapping and taxonomy as `opmap analyze`, so a query over
// rollups of one imported trace gives analyze's counts and totals exactly and its
// percentiles within the sketch's α.
#ifndef OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_
#define OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/timeline/device_breakdown.h"

namespace opmap::analysis {

enum class RollupSubject : uint8_t {
  kKernel = 0,       // one value per GPU event (kernel, memcpy, memset): its duration
  kOperatorGpu = 1,  // one value per operator instance: its kernels' summed GPU time
};

struct RollupRow {
  RollupSubject subject = RollupSubject::kKernel;
  std::string layer_type;     // METRICS.md name, e.g. "matmul"
  std::string operator_name;  // "" for GPU events no operator owns
  std::string kernel_name;    // "" for kOperatorGpu rows
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  stats::DDSketch sketch;  // of the values in ns
};

struct SessionRollup {
  std::vector<RollupRow> rows;
  std::vector<DeviceBreakdown> devices;
  std::array<int64_t, kMappingRuleCount> by_rule = {};
  int64_t gpu_event_count = 0;
  int64_t gpu_time_ns = 0;
  int64_t first_start_ns = 0;  // earliest GPU event start (0 when none)
  int64_t last_end_ns = 0;
};

SessionRollup BuildRollup(const Trace& trace, const MappingResult& mapping);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_
