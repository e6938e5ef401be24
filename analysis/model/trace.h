// The in-memory model every importer fills and every analysis reads: GPU activity
// (kernels, memcpy, memset), host launch API calls, and host ranges (operators, NVTX,
// annotations). The live path (CUPTI + NVTX records from the agent), Kineto JSON and
// Nsight Systems exports all become a Trace, so one mapping implementation serves all.
//
// Times are int64 nanoseconds on one clock per trace (CLOCK_REALTIME for live capture;
// Kineto's µs text parsed exactly to ns). Durations are never negative: importers reject
// such input before it gets here.
#ifndef OPMAP_ANALYSIS_MODEL_TRACE_H_
#define OPMAP_ANALYSIS_MODEL_TRACE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/string_table.h"

namespace opmap::analysis {

inline constexpr int64_t kNone = -1;  // "not present" for ids, counts and sizes

// Bounds on event times from any untrusted source (the wire, a target's ring), so that no
// end - start or sum over a session can overflow int64 (docs/security.md): one duration
// at most 2^52 ns (52 days), a timestamp within ±2^62 ns.
inline constexpr int64_t kMaxDurationNs = int64_t{1} << 52;
inline constexpr int64_t kMaxTimestampNs = int64_t{1} << 62;

enum class GpuEventKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// One interval of GPU activity on one device and stream.
struct GpuEvent {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  StringId name = kEmptyString;
  GpuEventKind kind = GpuEventKind::kKernel;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t process = kNone;      // pid of the launching process when known
  int64_t correlation = kNone;  // links to ApiCall::correlation of the launch
  int64_t external_id = kNone;  // framework's external correlation id (Kineto "External id")
  int64_t graph_id = kNone;     // CUDA graph id when launched from a graph
  int64_t graph_node_id = kNone;
  std::array<int32_t, 3> grid = {0, 0, 0};   // 0 = unknown
  std::array<int32_t, 3> block = {0, 0, 0};
  int32_t registers_per_thread = -1;  // -1 = unknown
  int64_t shared_memory_bytes = kNone;
  int64_t bytes = kNone;  // memcpy/memset size

  int64_t end_ns() const { return start_ns + dur_ns; }
};

enum class ApiKind : uint8_t { kRuntime = 0, kDriver = 1 };

// The thread on which a graph capture merge (analysis/graphs/capture_merge.h) places the
// capture-time operator ranges and launch calls of graphs replayed from `thread`. Thread
// ids cross the wire as 32 bits, so these lie in [-(2^30 + 2^29), -2^30]: below real tids
// (< 2^22 on Linux) and the importers' named-thread ids (-1000 - string id). What sits on
// such a thread has an order but no host time of its own.
inline constexpr int64_t kReplayThreadBase = -(int64_t{1} << 30);
inline constexpr int64_t ReplayThread(int64_t thread) {
  return kReplayThreadBase - (thread & ((int64_t{1} << 29) - 1));
}
inline constexpr bool IsReplayThread(int64_t thread) {
  return thread <= kReplayThreadBase && thread >= kReplayThreadBase - (int64_t{1} << 29);
}

// A host-side CUDA/HIP API call (cudaLaunchKernel, cuLaunchKernel, cudaGraphLaunch, ...).
struct ApiCall {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  StringId name = kEmptyString;
  ApiKind kind = ApiKind::kRuntime;
  int64_t process = kNone;
  int64_t thread = kNone;
  int64_t correlation = kNone;
  int64_t external_id = kNone;
  // The kernel a launch call names, when the source records it (Kineto's args "kernel"
  // on ROCm launch calls). A graph capture's launches never run, so this is what matches
  // a replayed graph's kernels to them (analysis/graphs). Not carried on the wire.
  StringId kernel = kEmptyString;

  int64_t end_ns() const { return start_ns + dur_ns; }
};

// What a host range is. Operators are kCpuOp (ATen ops) and kNvtx operator ranges;
// annotations (ProfilerStep#N, record_function) may hold launches directly.
enum class RangeKind : uint8_t {
  kCpuOp = 0,           // Kineto cpu_op / Operator
  kUserAnnotation = 1,  // Kineto user_annotation (record_function, ProfilerStep#N)
  kNvtx = 2,            // NVTX push/pop or start/end range
  kPythonFunction = 3,  // Kineto python_function (incl. "nn.Module: X_k")
};

struct Range {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  StringId name = kEmptyString;
  RangeKind kind = RangeKind::kCpuOp;
  int64_t process = kNone;
  int64_t thread = kNone;
  int64_t external_id = kNone;
  StringId input_dims = kEmptyString;  // raw "Input Dims" JSON text, for FLOPs from shapes
  // raw "Input type" JSON text (["c10::BFloat16", "float", ""]), for the precision of
  // the FLOPs (MFU divides by the peak of that precision). Not carried on the wire.
  StringId input_types = kEmptyString;
  // raw "Concrete Inputs" (["", "[1, 1]", "True"]) and "Input Strides" JSON text: conv
  // stride/padding, softmax/cat dims, the causal flag (docs/metrics.md). Not on the wire.
  StringId concrete_inputs = kEmptyString;
  StringId input_strides = kEmptyString;
  // Work the range's operator did, when its source says (NVTX shape payload
  // `{flops=F,bytes=B}`, see import/nvtx_names.h); kNone when not given.
  int64_t flops = kNone;
  int64_t bytes = kNone;
  // The NVTX range's integer payload when it carried one in [0, 2^63) (a request id on a
  // request range and on the ranges serving it: the per-request breakdown joins them,
  // docs/metrics.md "Tail latency"); kNone otherwise.
  int64_t payload = kNone;

  int64_t end_ns() const { return start_ns + dur_ns; }
};

// Warp-stall evidence for one GPU function (kernel name) and one stall reason: CUPTI PC
// sampling counts sampled warps; Nsight Compute gives a per-issue ratio
// (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio). The reason is kept
// as the source spelled it; analysis/stalls normalizes names and applies docs/metrics.md.
enum class StallUnit : uint8_t { kSamples = 0, kPerIssueRatio = 1 };

struct StallSample {
  StringId function = kEmptyString;
  StringId reason = kEmptyString;
  int32_t device = 0;
  StallUnit unit = StallUnit::kSamples;
  double value = 0;  // samples (kSamples) or warp cycles per issued instruction
  // How much this row counts when rows are summed per kernel and layer type: 1 for PC
  // samples (already counts); a kernel's duration for Nsight Compute ratios, which are
  // per-launch averages (docs/metrics.md: weight NCU ratios by kernel time). Not carried on
  // the wire, which holds sample counts only.
  double weight = 1;
  // The GPU event (index into Trace::gpu_events) the row was measured on, when the source
  // says (an Nsight Compute row joined to a trace launch); -1 for PC samples, which are
  // per function. Module stall fractions need it.
  int32_t event = -1;
};

// Work a profiler measured on one GPU event (an Nsight Compute row joined to its launch):
// DRAM bytes read + written and FP operations. The roofline prefers these to the bytes
// and FLOPs derived from shapes, and says which it used.
struct MeasuredWork {
  int32_t event = -1;                 // index into Trace::gpu_events
  std::optional<double> dram_bytes;
  std::optional<double> flops;
};

// Facts about the source the trace came from.
struct TraceInfo {
  std::string format;            // "kineto-json", "nsys-sqlite", "opmap-capture"
  std::vector<std::string> gpu_names;
  int64_t process = kNone;       // main process pid when the source names one
  // The capture window when the source was cut to one (Nsight's DERIVED_WINDOW_NS, a live
  // capture window): kernels whose launch fell before it have no launch record, and the
  // mapping says so (launch_outside_window) instead of "no launch record".
  int64_t window_start_ns = kNone;
  int64_t window_end_ns = kNone;
  // The smallest launch correlation id per process over the whole source, when the trace
  // holds only part of it (analysis/summary/streaming_parts.h): the mapping then tells a
  // launch before the window from a missing one as the whole trace would. Empty: the
  // mapping takes it from the trace's own calls.
  std::vector<std::pair<int64_t, int64_t>> first_correlation;
  // What the source could not record and why (e.g. {"cupti", "no CUDA driver ..."}):
  // reports print these as "unavailable: <reason>" instead of empty sections.
  std::vector<std::pair<std::string, std::string>> unavailable;
  // Source-level counts a reader must see beside the numbers, e.g. records the capture
  // dropped ("drops.ring_full") — in the order the importer gives them.
  std::vector<std::pair<std::string, int64_t>> counters;
};

// A graph node's creation, or its clone (graph instantiation clones every node), as
// Nsight Systems records them with --cuda-graph-trace=node (table CUDA_GRAPH_NODE_EVENTS):
// what the node-id merge (analysis/graphs/node_id_merge.h) follows from a replayed
// kernel's graph_node_id back to the call that created the node.
struct GraphNodeEvent {
  int64_t node_id = kNone;
  int64_t original_node_id = kNone;  // the node this one is a clone of; kNone: a creation
  int64_t process = kNone;
  int64_t thread = kNone;
  int64_t time_ns = 0;
};

struct Trace {
  TraceInfo info;
  StringTable strings;
  std::vector<GpuEvent> gpu_events;
  std::vector<ApiCall> api_calls;
  std::vector<Range> ranges;
  std::vector<StallSample> stalls;  // empty when the source sampled no stall reasons
  std::vector<MeasuredWork> measured;  // empty unless a profiler export was joined
  std::vector<GraphNodeEvent> graph_nodes;  // empty unless the source recorded them
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MODEL_TRACE_H_
