// Rollups: what the collector keeps of a capture session after its raw events expire —
// mergeable DDSketches (analysis/stats/ddsketch.h) of kernel durations, of operator
// instances' GPU time, of operator ranges' host durations and of request durations, keyed
// by (layer type, operator, kernel), plus the per-device time breakdown. Built from the
// same mapping and taxonomy as `opmap analyze`, so a query over rollups of one imported
// trace gives analyze's counts and totals exactly and its percentiles within the
// sketch's α.
//
// Host-side subjects need no GPU event at all (a capture of NVTX ranges on a machine
// without a GPU rolls up into kOperatorCpu and kRequest rows only):
//   - Request range: a range whose name makes a request key (serving/request_key.h:
//     `request`, `iteration`, `ProfilerStep#N`, serving steps). One value per request
//     range: its duration.
//   - Operator range: a range IsOperatorRange counts (cpu_op, user annotation, NVTX) that
//     is not a request range. One value per range: its inclusive host duration. Key:
//     (layer type from docs/metrics.md's operator-name table, "other" when no row matches;
//     operator name). Unlike kOperatorGpu, no kernel votes on the layer type.
//
// Module (schema v4): kKernel, kOperatorGpu and kOperatorCpu rows are also keyed by the
// module their operator range belongs to, attributed by AttributeModules (modules.h) —
// the same innermost enclosing `nn.Module: X` / NVTX module range as `opmap analyze`'s
// modules[] — so per-module counts and GPU time equal analyze's exactly. "" for events
// and ranges outside any module, for unmapped GPU events and for kRequest rows.
#ifndef OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_
#define OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/serving/request_key.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/timeline/device_breakdown.h"

namespace opmap::analysis {

enum class RollupSubject : uint8_t {
  kKernel = 0,       // one value per GPU event (kernel, memcpy, memset): its duration
  kOperatorGpu = 1,  // one value per operator instance: its kernels' summed GPU time
  kRequest = 2,      // one value per request range: its duration (key in operator_name)
  kOperatorCpu = 3,  // one value per operator range: its inclusive host duration
  // One value per request and component of its breakdown, by latency bucket
  // (tail_buckets.h): what `opmap query tail` reads.
  kRequestComponent = 4,
  // The window's slowest requests per request key (tail_buckets.h: at most
  // kExemplarsPerWindow): one value each, its extent; the exemplars `opmap query tail` lists.
  kRequestExemplar = 5,
};
// Stored as integers: never renumber.


struct RollupRow {
  RollupSubject subject = RollupSubject::kKernel;
  std::string layer_type;     // docs/metrics.md name, e.g. "matmul"; "" for kRequest rows
  // "" for GPU events no operator owns; the request key for kRequest rows.
  std::string operator_name;
  std::string kernel_name;    // "" except for kKernel rows
  std::string module;         // module name (modules.h), "" outside any module
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  stats::DDSketch sketch;  // of the values in ns
};

// The values of one row as they are added: count, sum, min, max and their sketch.
struct RollupValues {
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  stats::DDSketch sketch;

  void Add(int64_t v);
  RollupRow ToRow(RollupSubject subject, std::string_view layer_type, std::string_view op,
                  std::string_view kernel, std::string_view module) &&;
};

struct SessionRollup {
  std::vector<RollupRow> rows;
  std::vector<DeviceBreakdown> devices;
  std::array<int64_t, kMappingRuleCount> by_rule = {};
  int64_t gpu_event_count = 0;
  int64_t gpu_time_ns = 0;
  int64_t range_count = 0;     // host ranges of every kind
  int64_t request_count = 0;   // request ranges among them
  // Hull of the session's GPU events; of its host ranges when it has no GPU event (a
  // host-only capture); 0/0 when it has neither. The collector widens the session's
  // window to it before choosing its rollup bucket, so the bucket holds every value.
  int64_t first_start_ns = 0;
  int64_t last_end_ns = 0;
  // Thread CPU time the per-request breakdown took, so the collector can say what that
  // feature costs it (docs/benchmarks.md). The range nesting it reads is the module
  // attribution's, computed whether or not the session has requests: not counted.
  int64_t request_breakdown_cpu_ns = 0;
};

SessionRollup BuildRollup(const Trace& trace, const MappingResult& mapping);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_ROLLUP_H_
