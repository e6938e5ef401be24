// Maps every GPU event (kernel, memcpy, memset) to the host operator range that launched
// it, by the rules of DESIGN.md, in order of trust:
//   1. graph node      — a replayed CUDA/HIP graph's kernel placed in the operator that
//                        launched its node at capture: the launch copy a graph capture
//                        merge (analysis/graphs) put on a replay thread (model/trace.h),
//                        then nesting as in rule 3;
//   2. external_id     — the framework's external correlation id names an operator range
//                        (Kineto "External id"), accepted only when that range also
//                        encloses the launch call on its thread, if the launch is known;
//   3. launch_nesting  — correlation id → launch API call → innermost enclosing operator
//                        range (cpu_op / user_annotation / NVTX) on the same thread;
//      graph_launch    — the same through cudaGraphLaunch (one launch, many kernels).
// Request and step ranges (serving/request_key.h) and user annotations (Kineto or NVTX)
// that enclose a graph launch are never operators: a kernel under nothing else is unmapped.
// Kernels none of these place are `unmapped`, with the reason; their layer type later
// falls back to the kernel-name rules (docs/metrics.md), which is marked as inferred.
// One implementation for every source (Kineto JSON, Nsight Systems, live capture).
#ifndef OPMAP_ANALYSIS_MAPPING_KERNEL_MAPPER_H_
#define OPMAP_ANALYSIS_MAPPING_KERNEL_MAPPER_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model/trace.h"

namespace opmap::analysis {

enum class MappingRule : uint8_t {
  kGraphNode = 0,
  kExternalId = 1,
  kLaunchNesting = 2,
  kGraphLaunch = 3,
  kUnmapped = 4,
};
inline constexpr int kMappingRuleCount = 5;
std::string_view MappingRuleName(MappingRule rule);  // "graph_node", ..., "unmapped"

enum class UnmappedReason : uint8_t {
  kNone = 0,
  kNoLaunchRecord = 1,       // no API call carries the event's correlation id
  kLaunchOutsideRanges = 2,  // the launch sits in no operator range on its thread
  kLaunchOutsideWindow = 3,  // the launch precedes the capture window (set by importers)
};
inline constexpr int kUnmappedReasonCount = 4;
std::string_view UnmappedReasonName(UnmappedReason reason);

struct EventMapping {
  int32_t range = -1;       // index into Trace::ranges, -1 when unmapped
  int32_t launch_api = -1;  // index into Trace::api_calls, -1 when unknown
  MappingRule rule = MappingRule::kUnmapped;
  UnmappedReason reason = UnmappedReason::kNone;
};

struct MappingResult {
  std::vector<EventMapping> events;  // parallel to Trace::gpu_events
  std::array<int64_t, kMappingRuleCount> by_rule = {};
  std::array<int64_t, kUnmappedReasonCount> unmapped_by_reason = {};
  int64_t duplicate_correlations = 0;  // API calls sharing a correlation id (first kept)
  // Per range of the trace, OperatorRanges(trace): what the mapping placed kernels in,
  // kept for the summaries that read it again (the per-request breakdown).
  std::vector<bool> operator_ranges;

  // Per gpu_event, the launch API index (-1 unknown): what idle-time and launch
  // statistics need.
  std::vector<int32_t> LaunchApiIndex() const;
};

// True for the range kinds that count as operators (and so may own kernels).
bool IsOperatorRange(RangeKind kind);

// Per range of `trace`, whether it may own kernels: an operator kind, not a request or
// step range (serving/request_key.h), and not a user annotation (Kineto or NVTX) that encloses a graph
// launch call on its thread. What MapGpuEvents places kernels in.
std::vector<bool> OperatorRanges(const Trace& trace);

// A CUDA/HIP graph launch call (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch, ...).
bool IsGraphLaunchCall(std::string_view api_name);

MappingResult MapGpuEvents(const Trace& trace);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MAPPING_KERNEL_MAPPER_H_
