// Hardware envelope for MFU / MBU and roofline (docs/metrics.md "MFU"): SM count, HBM bandwidth
// and dense peak FLOP/s per precision. Built-in envelopes are datasheet figures, dense
// (sparse figures are 2x and never used); docs/envelopes.md tables them with sources. An
// override envelope comes as `key = value` text (the caller reads the file; analysis takes
// text).
// Fuzzed by tests/fuzz/profile_fuzzer.cc (docs/fuzzing.md).
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
  std::string source;            // one line: the datasheet the figures come from
  int32_t sm_count = 0;          // SMs (NVIDIA) or compute units (AMD)
  double hbm_bytes_per_s = 0;    // peak HBM (or GDDR) bandwidth, bytes/s
  // Dense peak FLOP/s; nullopt = the GPU has no such path (never 0).
  std::optional<double> fp32_flops_per_s;
  std::optional<double> tf32_flops_per_s;
  std::optional<double> bf16_flops_per_s;  // also FP16
  std::optional<double> fp8_flops_per_s;
  // Non-tensor peaks (CUDA cores / AMD vector ALUs) for elementwise and reduction kernels.
  // FP16 shares the BF16 slot; nullopt vector_bf16 falls back to vector_fp32.
  std::optional<double> vector_fp32_flops_per_s;
  std::optional<double> vector_bf16_flops_per_s;
  // Ridge point of the BF16 roofline, FLOP/byte (= bf16 peak / HBM bandwidth).
  std::optional<double> ridge_bf16_flop_per_byte;

  std::optional<double> PeakFlopsPerS(Precision p) const;
  // Ridge for any precision: peak(p) / HBM bandwidth; nullopt when the peak is.
  std::optional<double> RidgeFlopPerByte(Precision p) const;
  // Non-tensor peak: fp32/tf32 -> vector_fp32; bf16/fp16/fp8 -> vector_bf16, else
  // vector_fp32. nullopt when neither is known.
  std::optional<double> VectorPeakFlopsPerS(Precision p) const;
  // VectorPeakFlopsPerS(p) / HBM bandwidth; nullopt when that peak is.
  std::optional<double> VectorRidgeFlopPerByte(Precision p) const;
};

// The built-in envelopes, dense datasheet figures (docs/envelopes.md lists each with its
// source). The first four are A100 SXM4 80GB, H100 SXM5 80GB, H200 SXM 141GB and
// B200 HGX 180GB, in that order; the inference and AMD parts follow.
const std::vector<HardwareEnvelope>& BuiltinEnvelopes();

// Looks a GPU up by the name a trace spells ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
// "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA GH200 480GB", "AMD Instinct MI300X", ...)
// or by a table name, case-insensitively. Variants with other peaks and no row of their
// own (A100 40GB, A100 PCIe, H200 NVL, L40, T4, ...) are not matched: nullopt.
std::optional<HardwareEnvelope> EnvelopeForGpuName(std::string_view gpu_name);

// "no envelope for '<gpu_name>'; pass --envelope FILE": why MFU is unavailable when a
// trace's GPU has no built-in envelope (callers prefix "unavailable: ").
std::string NoEnvelopeMessage(std::string_view gpu_name);

// Override envelope text, one `key = value` per line; `#` starts a comment; blank lines
// are skipped. Keys (units in the name):
//   base          built-in to start from (a name EnvelopeForGpuName accepts); optional
//   name          required unless base is given
//   sm_count      integer > 0
//   hbm_tb_per_s  TB/s (1e12 bytes/s) > 0; required unless base is given
//   fp32_tflops, tf32_tflops, bf16_tflops, fp8_tflops   dense TFLOP/s > 0, or `none`
//   vector_fp32_tflops, vector_bf16_tflops   non-tensor TFLOP/s > 0, or `none`
//   ridge_bf16    FLOP/byte; computed from bf16_tflops / hbm_tb_per_s when not given
//   power_mode    text, e.g. "500 W cap": the power limit the peaks were measured at
//   source        text: where the figures come from. With a base and other figures
//                 overridden but no source, the base's source gets "; overridden: <keys>"
// Errors are InvalidArgument naming the line number and key ("line 3: key 'bf16_tflops':
// ..."); unknown and repeated keys are errors. At least one peak must remain.
absl::StatusOr<HardwareEnvelope> ParseEnvelopeText(std::string_view text);

// FLOPs / (seconds x peak). nullopt when the peak is absent or the time is not positive.
std::optional<double> Utilization(double flops, int64_t dur_ns, std::optional<double> peak);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MFU_HARDWARE_ENVELOPE_H_
