// The workload profile: what the model is and what it must meet, as `key = value` text
// (the caller reads the file; analysis takes text). It feeds MFU for whole steps
// (docs/metrics.md "Transformer forward from a workload profile"), MBU for decode, the SLA rows
// of the validation matrix and the quality rows of a release recommendation.
//
// Keys (units in the name; `#` starts a comment; blank lines skipped):
//   model                 required   e.g. "llama-3-8b"
//   revision              optional   the revision the profile was written for
//   seed                  optional   seeds of the load generator / sampling, as text; a
//                                    reproducibility input of the release report
//   parameters            required   non-embedding parameters N (active ones for MoE); may
//                                    use a suffix k, M, B (1e3, 1e6, 1e9): "7.5B"
//   layers                required   L, integer > 0
//   heads                 required   attention heads, integer > 0
//   head_dim              required   integer > 0
//   hidden                required   hidden size, integer > 0
//   kv_heads              optional   KV heads (GQA); default heads
//   precision             required   fp32 | tf32 | bf16 | fp16 | fp8
//   weight_bytes          optional   bytes of weights read per decode step; default
//                                    parameters × bytes of the precision
//   prefill_tokens        optional   P, tokens per request's prefill
//   decode_tokens         optional   tokens generated per request
//   batch                 optional   sequences per request / step; default 1
//   phase_mix             optional   "prefill=0.3,decode=0.7" (fractions summing to 1)
//   sla_p99_ms            optional   request p99 SLA, ms > 0
//   sla_p95_ms, sla_p50_ms optional
//   throughput_target     optional   requests/s > 0
//   power_budget_w        optional   GPU power a replica may draw, W > 0 (all its
//                                    devices together): the fit matrix's power budget
//   devices               optional   GPUs per replica; default 1
//   quality_metric        optional   name, e.g. "accuracy", "rougeL"
//   quality_higher_is_better optional true | false; default true
//   quality_threshold     optional   the minimum (or maximum) acceptable value
//   quality.<REV>         optional   measured quality of revision REV (repeatable per REV)
//   precision.<REV>       optional   the precision revision REV runs at, when it differs
//   sparsity.<REV>        optional   e.g. "2:4"; a precision or sparsity change without a
//                                    quality.<REV> is never a ship
// Errors are InvalidArgument naming the line number and key; unknown and repeated keys
// are errors, as are missing required keys ("missing required key 'layers'").
// Fuzzed by tests/fuzz/profile_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_WORKLOAD_WORKLOAD_PROFILE_H_
#define OPMAP_ANALYSIS_WORKLOAD_WORKLOAD_PROFILE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/mfu/hardware_envelope.h"

namespace opmap::analysis {

struct WorkloadProfile {
  std::string model;
  std::string revision;
  std::string seed;
  double parameters = 0;
  int64_t layers = 0, heads = 0, head_dim = 0, hidden = 0, kv_heads = 0;
  Precision precision = Precision::kBf16;
  std::optional<double> weight_bytes;
  std::optional<int64_t> prefill_tokens, decode_tokens;
  int64_t batch = 1;
  std::map<std::string, double> phase_mix;      // phase -> fraction
  std::optional<double> sla_p50_ms, sla_p95_ms, sla_p99_ms;
  std::optional<double> throughput_target;      // requests/s
  std::optional<double> power_budget_w;         // W per replica (all its devices)
  int64_t devices = 1;
  std::string quality_metric;
  bool quality_higher_is_better = true;
  std::optional<double> quality_threshold;
  std::map<std::string, double> quality;        // revision -> measured quality
  std::map<std::string, Precision> revision_precision;
  std::map<std::string, std::string> revision_sparsity;

  // d_attn = heads × head_dim.
  int64_t AttentionDim() const { return heads * head_dim; }
  // The precision revision `rev` runs at (precision.<REV>, else `precision`).
  Precision PrecisionOf(std::string_view rev) const;
};

absl::StatusOr<WorkloadProfile> ParseWorkloadProfileText(std::string_view text);

// docs/metrics.md formulas (per sequence; callers multiply by batch):
//   prefill of P tokens ≈ 2·N·P + 2·L·d_attn·P²
//   a decode step at context t ≈ 2·N + 4·L·d_attn·t
double PrefillFlops(const WorkloadProfile& p, int64_t prompt_tokens);
double DecodeStepFlops(const WorkloadProfile& p, int64_t context_tokens);
// Bytes one decode step reads: weights (weight_bytes, else N × bytes of the precision) +
// KV cache 2·L·kv_heads·head_dim·t·bytes per sequence × batch.
double DecodeStepBytes(const WorkloadProfile& p, int64_t context_tokens);

// Model FLOPs of one request: batch × (prefill of prefill_tokens + one decode step per
// generated token at contexts P, P+1, ..., P+decode_tokens−1). nullopt when the profile
// has no prefill_tokens; `basis` (when given) receives the formula with its numbers.
std::optional<double> ModelFlopsPerRequest(const WorkloadProfile& p, std::string* basis);

// Bytes per element of a precision (fp32/tf32 4, bf16/fp16 2, fp8 1).
int BytesPerElement(Precision p);
std::optional<Precision> ParsePrecisionName(std::string_view name);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_WORKLOAD_WORKLOAD_PROFILE_H_
