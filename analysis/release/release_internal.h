// Pieces the release-recommendation files share (matrix, triggers, verdict, rendering).
// Not part of the public API: include release_recommendation.h instead.
#ifndef OPMAP_ANALYSIS_RELEASE_RELEASE_INTERNAL_H_
#define OPMAP_ANALYSIS_RELEASE_RELEASE_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/bottleneck/mitigations.h"
#include "analysis/release/release_recommendation.h"

namespace opmap::analysis::release_internal {

// docs/metrics.md "Release recommendation" thresholds.
inline constexpr double kMinLatencyRegression = 0.05;  // p99: max(5%, 2α)
inline constexpr double kMfuDrop = 0.05;               // relative
inline constexpr double kStallRise = 0.05;             // share 0..1, i.e. 5 points
inline constexpr double kPerfPerWattDrop = 0.05;       // relative, requests per joule
// Two runs are "at equal load" when their throughputs differ by at most this (relative);
// a 5% drop in throughput is also the throughput row's regression bound.
inline constexpr double kLoadTolerance = 0.05;

// Owners (mitigations.h role names): p99/throughput/errors → runtime, MFU/stall → compiler,
// quality → performance modeling.
inline constexpr OwnerRole kRuntimeOwner = OwnerRole::kRuntimeSystemsEngineer;
inline constexpr OwnerRole kCompilerOwner = OwnerRole::kMlCompilerEngineer;
inline constexpr OwnerRole kModelingOwner = OwnerRole::kPerformanceModelingOwner;

// Trigger names, also used by tests and the JSON.
inline constexpr std::string_view kP99Trigger = "p99 regression";
inline constexpr std::string_view kMfuTrigger = "MFU drop";
inline constexpr std::string_view kStallTrigger = "memory-stall rise";
inline constexpr std::string_view kQualityTrigger = "quality";
inline constexpr std::string_view kErrorsTrigger = "errors";
inline constexpr std::string_view kPerfPerWattTrigger = "perf/W drop";

// What every row and trigger needs, computed once.
struct Context {
  const ReleaseInputs* in = nullptr;
  int hold_windows = 3;                   // ≥ 1
  uint64_t n_baseline = 0, n_candidate = 0;  // latency samples (Σ weights)
  bool samples_ok = false;                // both ≥ min_samples
  std::string samples_text;               // "baseline 10 samples, candidate 200; need ≥ 50 per arm"
  std::optional<MannWhitneyResult> test;  // over the arms' latency samples
  std::string test_error;                 // why `test` is absent
  double alpha_sketch = 0;                // max relative_accuracy of the arms
  double latency_threshold = kMinLatencyRegression;  // max(5%, 2α)
  // Precision or sparsity differs between the arms (profile precision.<REV>/sparsity.<REV>).
  bool model_changed = false;
  std::string model_change_text;          // "precision bf16 → fp8", "sparsity dense → 2:4"
};

Context MakeContext(const ReleaseInputs& in);

// MFU figure pair: "mfu" when both arms have it, else achieved FLOP/s when both have that.
enum class MfuBasis { kNone, kMfu, kAchievedFlops };
MfuBasis ChooseMfuBasis(const Arm& baseline, const Arm& candidate);
std::optional<double> MfuFigure(MfuBasis basis, const Arm& arm);
std::optional<double> MfuFigure(MfuBasis basis, const ArmWindow& window);
std::string_view MfuBasisText(MfuBasis basis);  // "mfu", "achieved_flops_per_s"

std::vector<ValidationRow> BuildMatrix(const Context& c);
// The perf-per-watt row and trigger (release_power.cc).
ValidationRow PerfPerWattRow(const Context& c);
Trigger PerfPerWattTrigger(const Context& c);
// An arm with the name its plot series carry.
using NamedArm = std::pair<std::string, const Arm*>;
// The earliest window start of either arm, or of any of `arms` (plots' time origin).
int64_t FirstWindowStart(const ReleaseInputs& in);
int64_t FirstWindowStart(const std::vector<NamedArm>& arms);
// Requests per joule per window of each arm over time; unavailable when no window has
// GPU power.
DocPlot PerfPerWattPlot(const std::vector<NamedArm>& arms);
// Requests per joule per window of each arm over time (or why not).
DocPlot PerfPerWattOverTime(const ReleaseInputs& in);
// Fills a window trigger's windows_held / fired / held and appends the window count.
void Settle(Trigger& t, const Context& c, bool arm_fired, const std::vector<bool>& windows);
// Sets a row's status from the failures found (empty: pass).
void Conclude(ValidationRow& row, const std::vector<std::string>& failures);
// candidate − baseline per layer (by name), largest increase first.
std::vector<LayerTime> LayerDeltas(const Arm& baseline, const Arm& candidate);
std::vector<Trigger> EvaluateTriggers(const Context& c, const std::vector<LayerTime>& deltas);
// Sets verdict, reasons and rejected from the matrix and triggers.
void Decide(const Context& c, Recommendation* r);

// "baseline: <unavailable[key]>" for the first key the arm explains, else a generic line.
// MissingReason for each arm that lacks the figure, joined.
std::string MissingBoth(const ReleaseInputs& in, bool base_missing, bool cand_missing,
                        std::initializer_list<std::string_view> keys, std::string_view figure);
std::string MissingReason(const Arm& arm, std::string_view arm_name,
                          std::initializer_list<std::string_view> keys,
                          std::string_view figure);
// Σ weights.
uint64_t SampleCount(const std::vector<WeightedValue>& values);
// requests ÷ window duration; nullopt when the duration is not positive.
std::optional<double> WindowThroughput(const ArmWindow& w);
// False only when both loads are known and differ by more than kLoadTolerance.
bool SameLoad(std::optional<double> a, std::optional<double> b);
// Error rate (0..1) of an arm or window; nullopt without errors or requests.
std::optional<double> ErrorRate(std::optional<uint64_t> errors, uint64_t requests);
// Longest run of consecutive true values.
int LongestRun(const std::vector<bool>& fired);
// A layer of the arm by name; nullptr when the arm has none of that name.
const LayerTime* FindLayer(const Arm& arm, std::string_view layer);

std::string Ms(double ns);                 // "12.35 ms"
std::string SignedPercent(double change);  // "+20.0%"

}  // namespace opmap::analysis::release_internal

#endif  // OPMAP_ANALYSIS_RELEASE_RELEASE_INTERNAL_H_
