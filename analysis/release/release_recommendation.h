// The release recommendation (docs/metrics.md "Release recommendation"): candidate vs baseline
// at the same load, as a validation matrix, rollback triggers evaluated per capture window
// (each must hold for 3 consecutive windows), and a verdict ship / hold / rollback with
// its evidence, the owner of each trigger and the rejected alternatives.
//
// Inputs are per arm and per window (a window is one capture session); analysis here does
// no I/O: the CLI fills ReleaseInputs from the collector.
#ifndef OPMAP_ANALYSIS_RELEASE_RELEASE_RECOMMENDATION_H_
#define OPMAP_ANALYSIS_RELEASE_RELEASE_RECOMMENDATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/workload/workload_profile.h"
#include "analysis/release/mann_whitney.h"
#include "analysis/report/document.h"
#include "analysis/summary/tail_explanation.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

// One capture window of one arm. Latency values are request latencies in ns as weighted
// values (sketch bins or exact values).
struct ArmWindow {
  std::string id;                         // "agent/session"
  int64_t start_ns = 0, end_ns = 0;
  uint64_t requests = 0;
  std::optional<double> p50_ns, p95_ns, p99_ns;
  std::vector<WeightedValue> latencies_ns;
  std::optional<double> mfu;              // model FLOPs utilization in the window
  std::optional<double> achieved_flops_per_s;  // when no peak is known
  std::optional<double> memory_stall_share;     // 0..1
  std::optional<uint64_t> errors;               // failed requests
  // Σ average power of the process's GPUs over the window (W), and requests per joule
  // (requests ÷ (W × window seconds)): perf per watt (docs/metrics.md "Power").
  std::optional<double> gpu_watts;
  std::optional<double> requests_per_joule;
  std::optional<double> mfu_per_watt;           // mfu (0..1) ÷ gpu_watts
};

// Per-request time of one layer (module, or layer type) in one arm, for naming the layer
// that regressed: Σ time of the layer's operators ÷ requests, and its p99.
struct LayerTime {
  std::string layer;          // e.g. "decoder_layer.1" (module) or "matmul" (layer type)
  std::string top_operator;   // the operator with the largest time in it
  double ns_per_request = 0;
  std::optional<double> p99_ns;
  double top_operator_ns_per_request = 0;
};

struct Arm {
  // The arm is the sessions whose `key` equals `revision` (the value): key "revision" by
  // default, or "host", "model" or any job label ("gpu_name", "power_limit_w", "pool").
  std::string key = "revision";
  std::string revision;
  std::vector<ArmWindow> windows;          // in time order
  // Whole-arm values (merged over windows by the caller with exact merges).
  uint64_t requests = 0;
  std::optional<double> p50_ns, p95_ns, p99_ns;
  double relative_accuracy = 0;            // α of the latency sketch; 0 = exact
  std::vector<WeightedValue> latencies_ns;
  std::optional<double> throughput_rps;    // requests ÷ Σ window durations
  std::optional<double> mfu;
  std::optional<double> achieved_flops_per_s;
  std::optional<double> memory_stall_share;
  std::optional<uint64_t> errors;
  // Over the windows with GPU power: time-weighted W, requests per joule, and with a
  // profile tokens per joule and model FLOP per joule.
  std::optional<double> gpu_watts;
  std::optional<double> requests_per_joule;
  std::optional<double> tokens_per_joule;
  std::optional<double> flops_per_joule;
  std::optional<double> mfu_per_watt;      // mfu (0..1) ÷ gpu_watts
  std::vector<LayerTime> layers;
  // The p99 tail per request key, from the collector's request-breakdown rollups
  // (docs/metrics.md "Tail latency"); empty when the sessions hold none.
  std::vector<TailExplanation> tails;
  // Why a figure is missing ("mfu" -> "no hardware envelope ...").
  std::map<std::string, std::string> unavailable;
  // Reproducibility: model revision, compiler/runtime versions, power mode, seeds, hosts.
  std::map<std::string, std::string> inputs;
};

// "gpu_name=Fake H100"; the bare value for a revision arm.
std::string ArmName(const Arm& arm);
// The model revision whose workload-profile keys (precision.<REV>, sparsity.<REV>,
// quality.<REV>) apply to the arm: the arm's value for a revision arm, else the one
// revision its sessions ran (inputs["revision"]); "" when they ran several or it is
// unknown, so the profile's defaults apply.
std::string ProfileRevision(const Arm& arm);

struct ReleaseInputs {
  Arm baseline, candidate;
  const WorkloadProfile* profile = nullptr;  // SLA and quality; may be null
  int min_samples = 50;                      // per arm, per distribution
  int hold_windows = 3;                      // consecutive windows a trigger must hold
  double alpha = 0.05;                       // significance for Mann–Whitney U
};

enum class RowStatus : uint8_t { kPass = 0, kFail = 1, kUnavailable = 2, kInsufficient = 3 };
std::string_view RowStatusName(RowStatus s);  // "pass", "fail", "unavailable", "insufficient"

struct ValidationRow {
  std::string metric;        // "p99 latency", "throughput", "MFU", "memory-stall share", ...
  std::optional<double> baseline, candidate;
  std::string unit;          // "ms", "req/s", "%", "points"
  std::optional<double> change;       // relative (candidate/baseline − 1) or points
  std::string criterion;     // e.g. "≤ SLA 25 ms and not > max(5%, 2α) worse"
  std::optional<MannWhitneyResult> test;
  RowStatus status = RowStatus::kUnavailable;
  std::string reason;        // why unavailable / insufficient, or what failed
  // A required row that is insufficient or unavailable holds the release: p99 always,
  // p50/p95 when the profile sets their SLA, throughput when it sets a target, quality
  // when precision or sparsity differs between the arms.
  bool required = false;
};

struct Trigger {
  std::string name;          // "p99 regression", "MFU drop", "memory-stall rise", "quality", "errors"
  std::string rule;          // the rule text with thresholds
  bool fired = false;        // over the whole arm, or in at least one candidate window
  int windows_held = 0;      // longest run of consecutive candidate windows it fired in
  bool held = false;         // windows_held ≥ hold_windows (quality: = fired, not per window)
  std::string evidence;      // figures behind it, incl. the layer that regressed for p99
  std::string layer;         // for latency triggers: the layer with the largest increase
  std::string owner;         // owner role name (mitigations.h OwnerRoleName)
  bool evaluable = true;     // false: unavailable, `evidence` says why
};

enum class Verdict : uint8_t { kShip = 0, kHold = 1, kRollback = 2 };
std::string_view VerdictName(Verdict v);  // "ship", "hold", "rollback"

struct Recommendation {
  Verdict verdict = Verdict::kHold;
  std::vector<std::string> reasons;        // why this verdict, with the figures
  std::vector<ValidationRow> matrix;
  std::vector<Trigger> triggers;
  std::vector<std::string> rejected;       // the other verdicts and why not
  std::vector<LayerTime> layer_deltas;     // candidate − baseline per layer, largest first
  std::map<std::string, std::string> inputs;  // reproducibility inputs, both arms
};

Recommendation Recommend(const ReleaseInputs& inputs);

void WriteRecommendationJson(const ReleaseInputs& inputs, const Recommendation& r,
                             text::JsonWriter& w);
// The verdict, matrix, triggers, layer deltas and inputs as sections, plus the plots
// "latency percentiles over time" (per window p50/p95/p99 of both arms) and, when the
// windows ran at different loads, "latency–throughput" (per window throughput vs p99).
std::vector<DocSection> RecommendationSections(const ReleaseInputs& inputs,
                                               const Recommendation& r);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_RELEASE_RECOMMENDATION_H_
