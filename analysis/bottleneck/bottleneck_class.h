// Bottleneck class per operator group, operator and layer type, each with the evidence of
// every rule checked (docs/metrics.md "Bottleneck class"). Rules, first match wins:
//   1 communication      collective kernels, or non-overlapped communication ≥ 4% of the
//                        iteration
//   2 host-starved/idle  the GPU idle before its kernels is mostly host wait (the launch was
//                        issued after the previous kernel on the stream ended): ≥ 50% of
//                        (GPU time + that idle)
//   3 compute-bound      U_c ≥ 0.6 and U_c ≥ U_m
//   4 memory-bound       U_m ≥ 0.6 and U_m > U_c, or intensity below the ridge with
//                        memory-stall fraction ≥ 0.5
//   5 launch-overhead    the GPU waits on launches: GPU time < CPU launch-call time, or
//                        ≥ 50% of its kernels < 10 µs AND the gaps before them ≥ their GPU
//                        time (short kernels that run back to back are not launch-bound)
//   6 latency/occupancy  U_c and U_m both < 0.6 (small grid: less than one wave per SM)
//   7 unclassified       only when a figure a rule needs is missing, named
// U_c = executed FLOPs ÷ (time × peak FLOP/s of its path and precision: tensor-core for
// matmul / conv / attention, vector otherwise), U_m = bytes ÷ (time × peak bandwidth). The
// expected class is the roofline's: intensity below the ridge of that same peak →
// memory-bound, at or above → compute-bound.
#ifndef OPMAP_ANALYSIS_BOTTLENECK_BOTTLENECK_CLASS_H_
#define OPMAP_ANALYSIS_BOTTLENECK_BOTTLENECK_CLASS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/mfu/hardware_envelope.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

// docs/metrics.md: a kernel shorter than this is "small" (the launch-overhead rule, and
// the mapping sheet's small-kernel counts).
inline constexpr int64_t kSmallKernelNs = 10'000;

enum class BottleneckClass : uint8_t {
  kCommunication = 0,
  kHostStarved = 1,
  kLaunchOverhead = 2,
  kComputeBound = 3,
  kMemoryBound = 4,
  kLatencyOccupancy = 5,
  kUnclassified = 6,
};

// "communication", "host-starved", "launch-overhead", "compute-bound", "memory-bound",
// "latency-occupancy", "unclassified".
std::string_view BottleneckClassName(BottleneckClass c);

// One figure a rule looked at: its value (nullopt: not measured, `missing` says why), the
// rule's threshold as text, and whether it met the rule.
struct Evidence {
  std::string figure;               // e.g. "U_c", "kernels < 10 µs", "memory-stall fraction"
  std::optional<double> value;
  std::string unit;                 // "", "ns", "FLOP/B", "fraction"
  std::string rule;                 // e.g. "≥ 0.6 and > U_m"
  bool met = false;
  std::string missing;              // why value is absent
};

// What is known of one operator (or one layer type: the same figures summed over its
// operators) in one trace or capture window. Times in ns. Absent figures are nullopt.
struct OperatorFigures {
  std::string name;                       // operator or layer-type name
  LayerType layer_type = LayerType::kOther;
  int64_t instances = 0;                  // operator instances
  int64_t gpu_time_ns = 0;                // Σ durations of its GPU events
  int64_t kernel_count = 0;
  int64_t small_kernel_count = 0;         // kernels shorter than 10 µs
  int64_t small_kernel_time_ns = 0;       // Σ durations of those kernels (mitigation bound)
  std::optional<int64_t> launch_call_ns;  // Σ CPU durations of its launch API calls
  // GPU idle on its streams just before its kernels while the host had not yet issued
  // the launch (launch start > previous kernel end), and all idle before them.
  std::optional<int64_t> host_wait_idle_ns;
  std::optional<int64_t> idle_ns;
  bool collective = false;                // any kernel is a collective (NCCL, ...)
  std::optional<int64_t> non_overlapped_comm_ns;  // communication not hidden by compute
  std::optional<int64_t> iteration_ns;            // wall time of the iteration(s) it ran in
  std::optional<double> flops;            // model FLOPs (analysis/mfu)
  std::optional<double> bytes;            // DRAM bytes moved (ncu, NVTX payload)
  // Why flops / bytes are absent, for the evidence (e.g. "no FLOPs formula for
  // aten::gelu"); empty: a generic "no FLOPs figure" / "no DRAM byte count".
  std::string flops_missing;
  std::string bytes_missing;
  std::string bytes_source;               // "formula", "NVTX payload", "Nsight Compute (measured)"
  std::optional<double> memory_stall_fraction;  // docs/metrics.md, analysis/stalls
  std::optional<int64_t> max_grid_blocks;       // blocks of its largest-grid kernel
  Precision precision = Precision::kBf16;
  // The vector (CUDA-core) peak applies instead of the tensor-core one: elementwise, norm,
  // softmax, reductions and copies are not matrix math.
  bool vector_path = false;
};

struct Classification {
  BottleneckClass cls = BottleneckClass::kUnclassified;
  std::optional<double> u_compute;        // U_c
  std::optional<double> u_memory;         // U_m
  std::optional<double> intensity;        // FLOP/byte
  std::optional<double> ridge;            // FLOP/byte of the envelope at the precision
  std::vector<Evidence> evidence;         // every rule checked, in rule order
  std::string summary;                    // one line: the rule that decided and its figures
};

// `envelope` may be null (no hardware envelope): the utilization rules then report
// "no hardware envelope" as missing.
Classification Classify(const OperatorFigures& op, const HardwareEnvelope* envelope);

// The roofline's class for a figure set: intensity (FLOPs ÷ bytes) against the ridge of its
// path and precision (peak FLOP/s ÷ peak bandwidth); at the ridge counts as compute-bound.
// kUnclassified when FLOPs, bytes or the envelope's peak are missing; `basis` says why or
// gives the comparison.
BottleneckClass ExpectedClass(const OperatorFigures& op, const HardwareEnvelope* envelope,
                              std::string* basis);

// The peak FLOP/s U_c divides by: the vector peak on the vector path, else tensor-core.
std::optional<double> PathPeak(const OperatorFigures& op, const HardwareEnvelope* envelope);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_BOTTLENECK_BOTTLENECK_CLASS_H_
