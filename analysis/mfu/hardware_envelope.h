// Hardware envelope for MFU / MBU and roofline (METRICS.md "MFU"): SM count, HBM bandwidth
// and dense peak FLOP/s per precision. Built-in envelopes are METRICS.md's "Peaks" table
// (dense figures; sparse figures are 2x and never used). An override envelope comes as
// `key = value` text (the caller reads the file; analysis takes text).
#ifndef OPMAP_ANALYSIS_MFU_HARDWARE_ENVELOPE_H_
#define OPMAP_ANALYSIS_MFU_HARDWARE_ENVELOPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

// Math precision of an operator. FP16 shares the BF16 peak (same tensor-core rate).
enum class Precision : uint8_t { kFp32 = 0, kTf32 = 1, kBf16 = 2, kFp16 = 3, kFp8 = 4 };

std::string_view PrecisionName(Precision p);  // "fp32", "tf32", "bf16", "fp16", "fp8"
// Bytes per element (fp32/tf32 4, bf16/fp16 2, fp8 1).
int ElementBytes(Precision p);

// Kineto "Input type" element ("float", "c10::BFloat16", "c10::Half",
// "c10::Float8_e4m3fn", ...) to a precision; nullopt for non-floating / unknown types
// ("Scalar", "long int", "").  fp32 tensors map to kFp32 (TF32 is a backend setting the
// trace does not record).
std::optional<Precision> PrecisionFromInputType(std::string_view input_type);

struct HardwareEnvelope {
  std::string name;              // e.g. "H100 SXM5 80GB"
  std::string power_mode;        // e.g. "700 W"; the peaks hold at this power limit
  int32_t sm_count = 0;
  double hbm_bytes_per_s = 0;    // peak HBM bandwidth, bytes/s
  // Dense peak FLOP/s; nullopt = the GPU has no such path (never 0).
  std::optional<double> fp32_flops_per_s;
  std::optional<double> tf32_flops_per_s;
  std::optional<double> bf16_flops_per_s;  // also FP16
  std::optional<double> fp8_flops_per_s;
  // Ridge point of the BF16 roofline, FLOP/byte (= bf16 peak / HBM bandwidth).
  std::optional<double> ridge_bf16_flop_per_byte;

  std::optional<double> PeakFlopsPerS(Precision p) const;
  // Ridge for any precision: peak(p) / HBM bandwidth; nullopt when the peak is.
  std::optional<double> RidgeFlopPerByte(Precision p) const;
};

// A100 SXM4 80GB, H100 SXM5 80GB, H200 SXM 141GB (METRICS.md Peaks table) and B200 HGX
// (NVIDIA's published dense figures; METRICS.md has no row for it yet), in that order.
const std::vector<HardwareEnvelope>& BuiltinEnvelopes();

// Looks a GPU up by the name a trace spells ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
// "NVIDIA A100-SXM4-80GB", or the table name). Variants with other peaks (PCIe, NVL,
// GH200, A100 40GB) are not matched: nullopt.
std::optional<HardwareEnvelope> EnvelopeForGpuName(std::string_view gpu_name);

// Override envelope text, one `key = value` per line; `#` starts a comment; blank lines
// are skipped. Keys (units in the name):
//   base          built-in to start from (a name EnvelopeForGpuName accepts); optional
//   name          required unless base is given
//   sm_count      integer > 0
//   hbm_tb_per_s  TB/s (1e12 bytes/s) > 0; required unless base is given
//   fp32_tflops, tf32_tflops, bf16_tflops, fp8_tflops   dense TFLOP/s > 0, or `none`
//   ridge_bf16    FLOP/byte; computed from bf16_tflops / hbm_tb_per_s when not given
//   power_mode    text, e.g. "500 W cap": the power limit the peaks were measured at
// Errors are InvalidArgument naming the line number and key ("line 3: key 'bf16_tflops':
// ..."); unknown and repeated keys are errors. At least one peak must remain.
absl::StatusOr<HardwareEnvelope> ParseEnvelopeText(std::string_view text);

// FLOPs / (seconds x peak). nullopt when the peak is absent or the time is not positive.
std::optional<double> Utilization(double flops, int64_t dur_ns, std::optional<double> peak);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MFU_HARDWARE_ENVELOPE_H_
