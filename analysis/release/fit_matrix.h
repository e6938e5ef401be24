// The workload fit matrix (`opmap report --fit` / `--arms KEY`, docs/metrics.md "Workload
// fit matrix"): one row per platform arm — the knee of its latency–throughput curve (the
// highest window throughput meeting the SLA) with p50/p95/p99 there, MFU, MBU for decode,
// perf per watt, the dominant bottleneck class per layer type with its evidence, the open
// risks, and a fit verdict — then the best platform, the runner-up and why each other arm
// lost. Pure: the CLI fetches the arms and their per-layer classes.
#ifndef OPMAP_ANALYSIS_RELEASE_FIT_MATRIX_H_
#define OPMAP_ANALYSIS_RELEASE_FIT_MATRIX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/bottleneck/bottleneck_class.h"
#include "analysis/bottleneck/mitigations.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"
#include "analysis/release/load_curve.h"
#include "analysis/release/release_recommendation.h"
#include "analysis/report/document.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

// The class that holds most of a layer type's GPU time in one arm, and the evidence line
// of the layer type's classification.
struct LayerBottleneckSummary {
  std::string layer_type;
  BottleneckClass cls = BottleneckClass::kUnclassified;
  int64_t gpu_time_ns = 0;
  // GPU time of the dominant class ÷ the layer type's (0..1); none when no operator group
  // of the layer type has a class time (the layer type's own class stands).
  std::optional<double> share_of_layer;
  std::string evidence;
};

struct FitArm {
  Arm arm;
  std::optional<HardwareEnvelope> envelope;    // this arm's GPU; none: MBU unavailable
  std::string envelope_source;                 // "built-in for 'NVIDIA H100 80GB HBM3'", ...
  std::vector<LayerBottleneckSummary> layers;  // GPU time, descending
  std::string layers_unavailable;              // why `layers` is empty
};

struct FitInputs {
  std::vector<FitArm> arms;                    // two or more
  const WorkloadProfile* profile = nullptr;
  // Criteria of the trigger comparison of each arm against the best one.
  int min_samples = 50;
  int hold_windows = 3;
  double alpha = 0.05;
};

enum class FitVerdict : uint8_t { kFits = 0, kFitsWithMitigation = 1, kDoesNotFit = 2, kUnavailable = 3 };
// "fits SLA", "fits with mitigation", "does not fit", "unavailable".
std::string_view FitVerdictName(FitVerdict v);

struct FitRow {
  std::string arm;                             // ArmName
  LoadCurve curve;
  // At the knee (nullopt without one).
  std::optional<double> knee_rps, p50_ns, p95_ns, p99_ns, gpu_watts, requests_per_joule;
  std::string power_unavailable;               // why gpu_watts / requests_per_joule are not
  std::optional<double> mfu;
  std::string mfu_basis;                       // "knee window", "arm", or why unavailable
  std::optional<double> mfu_per_watt;          // mfu ÷ GPU W at the knee
  std::optional<double> mbu;
  std::string mbu_basis;                       // the formula with its numbers, or why not
  std::vector<LayerBottleneckSummary> layers;
  std::string layers_unavailable;
  // Rollback triggers that fired or held when this arm is compared with the best one
  // (same rules as the release recommendation). The arm's open risks, these included, are
  // the risk map's (risk_map.h FitRisks).
  std::vector<Trigger> triggers;
  FitVerdict verdict = FitVerdict::kUnavailable;
  std::string verdict_reason;
  // kFitsWithMitigation: what closes the gap, from the dominant layer's class.
  std::string mitigation;
  std::string mitigation_owner;
};

struct FitResult {
  std::vector<FitRow> rows;                    // in input order
  std::optional<size_t> best, runner_up;       // indexes into rows
  std::string best_reason;                     // why the best won, or why there is none
  std::vector<std::string> rejected;           // each other arm: why it lost
};

FitResult BuildFit(const FitInputs& inputs);

void WriteFitJson(const FitInputs& inputs, const FitResult& fit, text::JsonWriter& w);
// The matrix, the verdict with the rejected alternatives, the curves (one series per arm,
// its knee marked, the SLA as a line) and perf per watt per arm over time.
std::vector<DocSection> FitSections(const FitInputs& inputs, const FitResult& fit);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_FIT_MATRIX_H_
