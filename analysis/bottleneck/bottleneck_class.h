// Bottleneck class per operator and per layer type, each with the evidence that triggered
// its rule (METRICS.md "Bottleneck class per operator"). Rules, first match wins:
//   communication      collective kernels, or non-overlapped communication ≥ 4% of the
//                      iteration
//   host-starved/idle  GPU idle dominated by host wait (the launch was issued after the
//                      previous kernel on the stream had ended)
//   launch-overhead    many kernels < 10 µs, or GPU time shorter than the CPU launch call
//   compute-bound      U_c is the larger and ≥ 0.6
//   memory-bound       U_m is the larger and ≥ 0.6, or intensity below the ridge with
//                      memory-stall fraction ≥ 0.5
//   latency/occupancy  both < 0.6 (small grid: less than one wave of blocks per SM)
// U_c = FLOPs ÷ (time × peak FLOP/s), U_m = bytes ÷ (time × peak bandwidth).
// When a figure a rule needs is missing, the rule is not applied and the evidence says
// which figure was missing; an operator no rule can decide is kUnclassified with the
// missing figures as evidence (never a guessed class).
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
  std::optional<double> memory_stall_fraction;  // METRICS.md, analysis/stalls
  std::optional<int64_t> max_grid_blocks;       // blocks of its largest-grid kernel
  Precision precision = Precision::kBf16;
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

// The class an operator of this layer type is expected to have on a GPU (matmul, conv,
// attention: compute-bound; norm, softmax, elementwise, embedding, memcpy: memory-bound;
// communication: communication; other: unclassified).
BottleneckClass ExpectedClass(LayerType type);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_BOTTLENECK_BOTTLENECK_CLASS_H_
