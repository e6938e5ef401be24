// TraceSummary: what `opmap analyze` reports for one trace — per-device time breakdown,
// per-operator / per-layer-type / per-kernel-name GPU time with exact percentiles, the
// mapping rule tally, idle-time categories and launch statistics. Definitions:
// docs/metrics.md. Names are copied out of the trace so a summary stands alone.
#ifndef OPMAP_ANALYSIS_SUMMARY_TRACE_SUMMARY_H_
#define OPMAP_ANALYSIS_SUMMARY_TRACE_SUMMARY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/tail_explanation.h"
#include "analysis/model/trace.h"
#include "analysis/stalls/stall_summary.h"
#include "analysis/stats/quantiles.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "analysis/timeline/device_breakdown.h"
#include "analysis/timeline/idle_time.h"
#include "analysis/timeline/launch_stats.h"

namespace opmap::analysis {

// Percentiles here are exact on one trace (numpy-style linear interpolation), in ns.
struct OperatorStats {
  std::string name;
  LayerType layer_type = LayerType::kOther;
  bool layer_type_from_name = false;  // operator-name rule matched (else kernel majority)
  int64_t count = 0;                  // operator instances that ran GPU work
  int64_t kernel_count = 0;           // GPU events mapped to those instances
  int64_t gpu_time_ns = 0;            // sum of their durations
  stats::Percentiles instance_gpu_time_ns;   // over per-instance summed GPU time
};

struct KernelStats {
  std::string name;
  LayerType layer_type = LayerType::kOther;  // the type holding most of its GPU time
  int64_t count = 0;
  int64_t gpu_time_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  stats::Percentiles duration_ns;
};

struct LayerTypeStats {
  LayerType layer_type = LayerType::kOther;
  int64_t count = 0;  // GPU events
  int64_t gpu_time_ns = 0;
  double share = 0;  // of the trace's summed GPU event time
};

// One GPU event as launched and mapped: what `opmap analyze --launches` lists so a
// capture can be checked launch by launch (examples/gpu_check).
struct LaunchRow {
  std::string name;
  GpuEventKind kind = GpuEventKind::kKernel;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::array<int32_t, 3> grid = {0, 0, 0};  // 0 = unknown
  std::array<int32_t, 3> block = {0, 0, 0};
  int64_t correlation = kNone;
  int64_t external_id = kNone;
  int64_t graph_id = kNone;
  std::string op;  // the operator range it was mapped to; "" when unmapped
  LayerType layer_type = LayerType::kOther;
  MappingRule rule = MappingRule::kUnmapped;
  UnmappedReason reason = UnmappedReason::kNone;
};

struct SummaryOptions {
  bool list_launches = false;  // fill TraceSummary::launches (one row per GPU event)
};

// How a summary was built when the trace was streamed a part at a time
// (analysis/summary/streaming_parts.h): reports print it, and say which rows were sketched.
struct StreamingFacts {
  bool streamed = false;
  int64_t parts = 0;
  int64_t largest_part_events = 0;
  int64_t launches_not_held = 0;  // GPU events mapped without their launch call (see there)
  int64_t late_events = 0;
  int64_t forced_cuts = 0;        // memory bounds reached (streaming_parts.h)
  int64_t calls_past_cap = 0;
  uint64_t spilled_bytes = 0;     // events written to the temporary file to be sorted
  int64_t spill_runs = 0;
  uint64_t memory_budget_bytes = 0;  // for exact percentile values
  int64_t sketched_rows = 0;         // rows whose percentiles come from a DDSketch
};

struct TraceSummary {
  TraceInfo info;
  int64_t gpu_event_count = 0;
  int64_t gpu_time_ns = 0;  // summed durations (not a union: see devices for unions)
  std::vector<DeviceBreakdown> devices;
  std::vector<OperatorStats> operators;      // GPU time, descending
  std::vector<LayerTypeStats> layer_types;   // GPU time, descending
  std::vector<KernelStats> kernels;          // GPU time, descending
  std::array<int64_t, kMappingRuleCount> by_rule = {};
  std::array<int64_t, kUnmappedReasonCount> unmapped_by_reason = {};
  int64_t layer_type_source_operator = 0;     // events typed by their operator
  int64_t layer_type_source_kernel_name = 0;  // events typed by their own name (inferred)
  std::vector<StreamIdleTime> idle_time;
  LaunchStatsSummary launch_stats;
  HostRangeSummary host_ranges;  // operator ranges by self time (host side)
  ModuleSummary modules;         // GPU time by module (nn.Module / NVTX layer ranges)
  RequestTailSummary tail;       // per-request breakdown and tail explanation
  StallSummary stalls;           // memory-stall fractions per kernel and layer type
  std::vector<LaunchRow> launches;  // in trace order; only with list_launches
  StreamingFacts streaming;
};

TraceSummary Summarize(const Trace& trace, const MappingResult& mapping,
                       const SummaryOptions& options = {});

// The stall sections (per kernel, layer type and module) from a trace's samples, with the
// kernels' layer types already in `s`: Summarize's last step, and what a summary built in
// parts (summary_accumulator.h) adds from a part (one without samples says why).
void AddStallSections(const Trace& trace, const MappingResult& mapping, TraceSummary* s);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_TRACE_SUMMARY_H_
