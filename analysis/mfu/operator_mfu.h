// MFU per operator and per request/iteration from the trace itself (docs/metrics.md "MFU"):
// FLOPs of each GPU-owning operator instance come from its NVTX payload (Range::flops,
// the demo workload's `{flops=F}`) or else its Kineto Input Dims (op_flops.h); precision
// from its Kineto Input type, else from the kernel names, else the caller's default.
//
// Conventions (printed with the figures, as docs/metrics.md asks):
//   - per operator: Σ FLOPs ÷ (Σ GPU time of its kernels × peak(precision)) — how well the
//     operator's own kernels use the device while they run;
//   - per request / iteration: Σ FLOPs of the operator instances inside the range ÷
//     (range wall time × devices × peak) — the model-level figure;
//   - FLOPs are counted once per GPU event owner: the operator range the kernels map to
//     (aten::addmm, not the aten::linear around it), so nested operators are not counted
//     twice; owners with no formula add nothing and are listed as not covered, with the
//     share of GPU time they hold.
#ifndef OPMAP_ANALYSIS_MFU_OPERATOR_MFU_H_
#define OPMAP_ANALYSIS_MFU_OPERATOR_MFU_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/mfu/op_flops.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

// The first floating-point element of Kineto "Input type" JSON text
// (["c10::BFloat16", "Scalar"] → bf16); nullopt when none.
std::optional<Precision> PrecisionFromInputTypes(std::string_view input_types_json);
// From a kernel name's dtype marker (bf16, f16/fp16/h884/h1688/..., e4m3/fp8, tf32, f32);
// nullopt when the name does not say.
std::optional<Precision> PrecisionFromKernelName(std::string_view kernel_name);

// Model FLOPs of one operator instance: its NVTX payload (`flops=`, formula "NVTX payload
// flops=N") when given, else its recorded shapes (analysis/roofline RangeCost).
FlopsEstimate RangeFlops(const Trace& trace, const Range& range);

struct OperatorMfuRow {
  std::string name;
  int64_t instances = 0;             // instances owning GPU events
  int64_t instances_with_flops = 0;
  double flops = 0;                  // Σ over instances_with_flops
  int64_t gpu_time_ns = 0;           // Σ GPU time of all instances
  int64_t gpu_time_with_flops_ns = 0;
  std::optional<Precision> precision;  // of the instances with FLOPs (majority)
  std::string precision_source;      // "Input type", "kernel name", "default"
  std::string formula;               // of the first instance, or why no FLOPs
  std::optional<double> achieved_flops_per_s;  // flops ÷ gpu_time_with_flops
  std::optional<double> mfu;         // nullopt: no FLOPs or no peak (see unavailable)
  std::string unavailable;
};

struct RequestMfuRow {
  std::string name;                  // the range's name ("ProfilerStep#3", "request")
  int64_t start_ns = 0, dur_ns = 0;
  double flops = 0;                  // of the GPU-owning instances inside it
  int64_t gpu_time_ns = 0;           // of all its GPU events
  int64_t gpu_time_with_flops_ns = 0;
  std::optional<double> mfu;
};

struct MfuOptions {
  const HardwareEnvelope* envelope = nullptr;   // null: MFU unavailable, FLOP/s still given
  std::optional<Precision> default_precision;   // when an instance says nothing
  int32_t devices = 1;                          // devices per request (tensor parallel)
};

struct MfuReport {
  std::string convention;                // the text above, for the report
  std::string envelope_name;             // "" without one
  std::string unavailable;               // why no MFU at all (no envelope), else ""
  std::vector<OperatorMfuRow> operators; // FLOPs, descending; then GPU time
  std::vector<RequestMfuRow> requests;   // in time order
  double flops = 0;                      // Σ over all instances
  int64_t gpu_time_ns = 0;               // Σ GPU event time owned by operators
  int64_t gpu_time_with_flops_ns = 0;
  std::optional<double> mfu_over_requests;  // Σ request FLOPs ÷ Σ (dur × devices × peak)
};

MfuReport ComputeOperatorMfu(const Trace& trace, const MappingResult& mapping,
                             const MfuOptions& options);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MFU_OPERATOR_MFU_H_
