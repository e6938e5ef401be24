// The figures of one release arm computed from what the collector answered: request
// latency samples from its sketches, per-layer operator time, throughput, model FLOP/s and
// MFU per window and for the arm (docs/metrics.md), the memory-stall share from CPU
// counters, and the reproducibility inputs. Pure: the caller (cli/report_arms.cc) makes
// the Query calls and hands over the responses. Every figure that cannot be computed is
// named in Arm::unavailable with the reason.
#ifndef OPMAP_ANALYSIS_RELEASE_ARM_FIGURES_H_
#define OPMAP_ANALYSIS_RELEASE_ARM_FIGURES_H_

#include <string>
#include <vector>

#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"
#include "analysis/release/release_recommendation.h"
#include "opmap/v1/query.pb.h"

namespace opmap::analysis {

// Sketch bins as weighted values (each bin's representative value, its count), plus the
// zero bin at 0: the samples the Mann–Whitney U test ranks.
std::vector<WeightedValue> SketchSamples(const opmap::v1::Sketch& sketch);

// "what1, what2: reason; what3: reason2": one entry per distinct reason, so five counters
// that failed for the same missing PMU read as one line.
std::string GroupedReasons(
    const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list);

// The arm's windows from request latency grouped by session (quantiles 0.5, 0.95, 0.99
// in that order, sketches included), sorted by start; and the arm's merged row.
void SetWindows(const opmap::v1::LatencyResponse& by_session, Arm& arm);
void SetMergedLatency(const opmap::v1::LatencyResponse& merged, Arm& arm);

// Per layer from operator latency grouped by (layer key, operator): Σ operator time per
// request and the top operator. With `by_module`, rows that are module ranges themselves
// are left out (their time is their children's). False when the rows say nothing about
// layers (no rows, or no layer key recorded): the caller tries the next grouping.
bool SetLayers(const opmap::v1::LatencyResponse& rows, bool by_module, bool gpu_time, Arm& arm);

// Throughput per window and for the arm (requests over capture-window seconds), and with
// a workload profile the achieved model FLOP/s; with an envelope too, MFU.
void SetThroughputAndMfu(const WorkloadProfile* profile, const HardwareEnvelope* envelope,
                         Arm& arm);

// GPU power per window from the Power query grouped by SESSION (rows keyed by the
// windows' ids), then perf per watt per window and for the arm, and the power mode
// (limit, mode, GPU names) as reproducibility inputs; arm.unavailable["perf_per_watt"]
// with the agents' reasons when no window has GPU power. After SetThroughputAndMfu.
void SetPower(const opmap::v1::PowerResponse& by_session, const WorkloadProfile* profile,
              Arm& arm);

// The CPU memory-stall share, PAPI_MEM_SCY / PAPI_TOT_CYC (scaled), or why not.
void SetStallShare(const opmap::v1::CountersResponse& counters, Arm& arm);

// What was selected and from where, for the report's reproducibility section.
struct ArmSelection {
  std::vector<std::string> hosts;
  std::string model;
  std::string opmap_version;
  const WorkloadProfile* profile = nullptr;
  const HardwareEnvelope* envelope = nullptr;
};
void SetReproducibilityInputs(const ArmSelection& selection, Arm& arm);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_ARM_FIGURES_H_
