#include "analysis/bottleneck/bottleneck_class.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/bottleneck/evidence_format.h"

namespace opmap::analysis {
namespace {

using bottleneck_format::Number;
using bottleneck_format::UsText;

// docs/metrics.md thresholds, and the two this module had to choose (README.md says why).
constexpr double kUtilizationThreshold = 0.6;
constexpr double kManySmallKernels = 0.5;      // share of the operator's kernels
constexpr double kHostWaitDominates = 0.5;     // share of (GPU time + idle before it)
constexpr double kCommShareOfIteration = 0.04;
constexpr double kMemoryStallThreshold = 0.5;

Evidence Missing(std::string figure, std::string unit, std::string rule, std::string why) {
  Evidence e;
  e.figure = std::move(figure);
  e.unit = std::move(unit);
  e.rule = std::move(rule);
  e.missing = std::move(why);
  return e;
}

Evidence Measured(std::string figure, double value, std::string unit, std::string rule,
                  bool met) {
  Evidence e;
  e.figure = std::move(figure);
  e.value = value;
  e.unit = std::move(unit);
  e.rule = std::move(rule);
  e.met = met;
  return e;
}

std::string Pct(double fraction) { return absl::StrFormat("%.1f%%", 100.0 * fraction); }

// The utilization figures and why each is missing; computed once, used by rules 4–6 and
// reported in Classification even when an earlier rule decided.
struct Utilizations {
  std::optional<double> u_c, u_m, intensity, ridge;
  std::string u_c_missing, u_m_missing, intensity_missing, ridge_missing;
};

Utilizations ComputeUtilizations(const OperatorFigures& op, const HardwareEnvelope* env) {
  Utilizations u;
  const std::string flops_why =
      op.flops_missing.empty() ? absl::StrCat("no FLOPs figure for ", op.name) : op.flops_missing;
  const std::string bytes_why = op.bytes_missing.empty() ? "no DRAM byte count" : op.bytes_missing;
  const std::optional<double> peak = PathPeak(op, env);
  const std::string no_peak =
      env == nullptr ? "no hardware envelope"
                     : absl::StrCat("no ", op.vector_path ? "vector " : "",
                                    std::string(PrecisionName(op.precision)), " peak on ",
                                    env->name);

  if (!op.flops) {
    u.u_c_missing = flops_why;
  } else if (!peak) {
    u.u_c_missing = no_peak;
  } else if (op.gpu_time_ns <= 0) {
    u.u_c_missing = "no GPU time";
  } else {
    u.u_c = Utilization(*op.flops, op.gpu_time_ns, peak);
  }

  if (!op.bytes) {
    u.u_m_missing = bytes_why;
  } else if (env == nullptr || env->hbm_bytes_per_s <= 0) {
    u.u_m_missing = env == nullptr ? "no hardware envelope" : "no HBM bandwidth in the envelope";
  } else if (op.gpu_time_ns <= 0) {
    u.u_m_missing = "no GPU time";
  } else {
    u.u_m = Utilization(*op.bytes, op.gpu_time_ns, env->hbm_bytes_per_s);
  }

  if (!op.flops) {
    u.intensity_missing = flops_why;
  } else if (!op.bytes) {
    u.intensity_missing = bytes_why;
  } else if (*op.bytes <= 0) {
    u.intensity_missing = "byte count is 0";
  } else {
    u.intensity = *op.flops / *op.bytes;
  }
  if (env == nullptr) {
    u.ridge_missing = "no hardware envelope";
  } else {
    u.ridge = op.vector_path ? env->VectorRidgeFlopPerByte(op.precision)
                             : env->RidgeFlopPerByte(op.precision);
    if (!u.ridge) u.ridge_missing = no_peak;
  }
  return u;
}

// Rule 1. A non-collective operator with no non-overlapped figure simply does not meet it:
// rules 1–3 are sufficient conditions, so a missing figure cannot block later rules.
bool CommunicationRule(const OperatorFigures& op, Classification& c) {
  c.evidence.push_back(Measured("collective kernels", op.collective ? 1 : 0, "",
                                "any kernel is a collective (NCCL, ...)", op.collective));
  const std::string rule = absl::StrCat("≥ ", Pct(kCommShareOfIteration), " of the iteration");
  bool share_met = false;
  double share = 0;
  if (!op.non_overlapped_comm_ns) {
    c.evidence.push_back(Missing("non-overlapped communication", "fraction", rule,
                                 "no non-overlapped communication figure"));
  } else if (!op.iteration_ns || *op.iteration_ns <= 0) {
    c.evidence.push_back(
        Missing("non-overlapped communication", "fraction", rule, "no iteration time"));
  } else {
    share = static_cast<double>(*op.non_overlapped_comm_ns) / *op.iteration_ns;
    share_met = share >= kCommShareOfIteration;
    c.evidence.push_back(
        Measured("non-overlapped communication", share, "fraction", rule, share_met));
  }
  if (op.collective) {
    c.summary = "communication: its kernels are collectives";
  } else if (share_met) {
    c.summary = absl::StrCat("communication: non-overlapped communication ", Pct(share),
                             " of the iteration (≥ ", Pct(kCommShareOfIteration), ")");
  }
  return op.collective || share_met;
}

// Rule 2: idle dominated by host wait. The denominator is the operator's GPU time plus the
// idle just before its kernels: the wall time its stream spent on it.
bool HostStarvedRule(const OperatorFigures& op, Classification& c) {
  const std::string rule =
      absl::StrCat("≥ ", Pct(kHostWaitDominates), " of (GPU time + idle before its kernels)");
  const char* figure = "host-wait idle share";
  if (!op.host_wait_idle_ns) {
    c.evidence.push_back(Missing(figure, "fraction", rule, "no launch records for host wait"));
    return false;
  }
  if (!op.idle_ns) {
    c.evidence.push_back(Missing(figure, "fraction", rule, "no idle figure"));
    return false;
  }
  const int64_t wall = op.gpu_time_ns + *op.idle_ns;
  if (wall <= 0) {
    c.evidence.push_back(Missing(figure, "fraction", rule, "no GPU time"));
    return false;
  }
  const double share = static_cast<double>(*op.host_wait_idle_ns) / wall;
  const bool met = share >= kHostWaitDominates;
  c.evidence.push_back(Measured(figure, share, "fraction", rule, met));
  if (met) {
    c.summary = absl::StrCat("host-starved: host-wait idle ", UsText(*op.host_wait_idle_ns), " = ",
                             Pct(share), " of GPU time + idle (≥ ", Pct(kHostWaitDominates), ")");
  }
  return met;
}

// Rule 5: the GPU waited on launches. Many short kernels alone are not evidence: they must
// also have waited (the idle gaps before them at least their own GPU time); back-to-back
// short kernels are not launch-bound.
bool LaunchOverheadRule(const OperatorFigures& op, Classification& c) {
  const std::string small_rule =
      absl::StrCat("≥ ", Pct(kManySmallKernels), " of its kernels < 10 µs");
  bool small_met = false;
  double small_share = 0;
  if (op.kernel_count <= 0) {
    c.evidence.push_back(Missing("kernels < 10 µs", "fraction", small_rule, "no kernels"));
  } else {
    small_share = static_cast<double>(op.small_kernel_count) / op.kernel_count;
    small_met = small_share >= kManySmallKernels;
    c.evidence.push_back(
        Measured("kernels < 10 µs", small_share, "fraction", small_rule, small_met));
  }
  const char* gap_figure = "idle before its kernels ÷ GPU time";
  const std::string gap_rule = "≥ 1 (with the short-kernel rule)";
  bool gaps_met = false;
  double gap_ratio = 0;
  if (!op.idle_ns) {
    c.evidence.push_back(Missing(gap_figure, "", gap_rule, "no idle figure"));
  } else if (op.gpu_time_ns <= 0) {
    c.evidence.push_back(Missing(gap_figure, "", gap_rule, "no GPU time"));
  } else {
    gap_ratio = static_cast<double>(*op.idle_ns) / op.gpu_time_ns;
    gaps_met = gap_ratio >= 1.0;
    c.evidence.push_back(Measured(gap_figure, gap_ratio, "", gap_rule, gaps_met && small_met));
  }
  bool launch_met = false;
  double ratio = 0;
  const char* ratio_figure = "GPU time ÷ launch call time";
  if (!op.launch_call_ns) {
    c.evidence.push_back(Missing(ratio_figure, "", "< 1", "no launch API record"));
  } else if (*op.launch_call_ns <= 0) {
    c.evidence.push_back(Missing(ratio_figure, "", "< 1", "launch call time is 0"));
  } else {
    ratio = static_cast<double>(op.gpu_time_ns) / *op.launch_call_ns;
    launch_met = op.gpu_time_ns < *op.launch_call_ns;
    c.evidence.push_back(Measured(ratio_figure, ratio, "", "< 1", launch_met));
  }
  if (launch_met) {
    c.summary = absl::StrCat("launch-overhead: GPU time ", UsText(op.gpu_time_ns),
                             " < launch call time ", UsText(*op.launch_call_ns));
  } else if (small_met && gaps_met) {
    c.summary = absl::StrCat("launch-overhead: ", op.small_kernel_count, " of ", op.kernel_count,
                             " kernels < 10 µs (", Pct(small_share), ") and idle before them ",
                             UsText(static_cast<double>(*op.idle_ns)), " ≥ their GPU time ",
                             UsText(op.gpu_time_ns));
  }
  return launch_met || (small_met && gaps_met);
}

std::string ThresholdText() { return Number(kUtilizationThreshold); }

bool ComputeBoundRule(const Utilizations& u, Classification& c) {
  const std::string rule = absl::StrCat("≥ ", ThresholdText(), " and ≥ U_m");
  if (!u.u_c) {
    c.evidence.push_back(Missing("U_c", "fraction", rule, u.u_c_missing));
    return false;
  }
  // "U_c is the larger" needs U_m; with U_c below the threshold the rule fails either way.
  if (!u.u_m && *u.u_c >= kUtilizationThreshold) {
    Evidence e = Missing("U_c", "fraction", rule, absl::StrCat("U_m unknown: ", u.u_m_missing));
    e.value = u.u_c;  // measured, but the comparison it needs is not
    c.evidence.push_back(std::move(e));
    return false;
  }
  const bool met = *u.u_c >= kUtilizationThreshold && *u.u_c >= *u.u_m;
  c.evidence.push_back(Measured("U_c", *u.u_c, "fraction", rule, met));
  if (met) {
    c.summary = absl::StrCat("compute-bound: U_c ", Number(*u.u_c), " ≥ ", ThresholdText(),
                             " and ≥ U_m ", Number(*u.u_m));
  }
  return met;
}

bool MemoryBoundRule(const OperatorFigures& op, const Utilizations& u, Classification& c) {
  const std::string rule = absl::StrCat("≥ ", ThresholdText(), " and > U_c");
  bool um_met = false;
  if (!u.u_m) {
    c.evidence.push_back(Missing("U_m", "fraction", rule, u.u_m_missing));
  } else if (!u.u_c && *u.u_m >= kUtilizationThreshold) {
    Evidence e = Missing("U_m", "fraction", rule, absl::StrCat("U_c unknown: ", u.u_c_missing));
    e.value = u.u_m;
    c.evidence.push_back(std::move(e));
  } else {
    um_met = *u.u_m >= kUtilizationThreshold && (!u.u_c || *u.u_m > *u.u_c);
    c.evidence.push_back(Measured("U_m", *u.u_m, "fraction", rule, um_met));
  }

  bool below_ridge = false;
  if (!u.intensity || !u.ridge) {
    const std::string rule_text =
        u.ridge ? absl::StrCat("< ridge ", Number(*u.ridge), " FLOP/B") : "< ridge";
    c.evidence.push_back(Missing("arithmetic intensity", "FLOP/B", rule_text,
                                 !u.intensity ? u.intensity_missing : u.ridge_missing));
  } else {
    below_ridge = *u.intensity < *u.ridge;
    c.evidence.push_back(Measured("arithmetic intensity", *u.intensity, "FLOP/B",
                                  absl::StrCat("< ridge ", Number(*u.ridge), " FLOP/B"),
                                  below_ridge));
  }
  const std::string stall_rule =
      absl::StrCat("≥ ", Number(kMemoryStallThreshold), " with intensity below the ridge");
  bool stall_met = false;
  if (!op.memory_stall_fraction) {
    c.evidence.push_back(Missing("memory-stall fraction", "fraction", stall_rule,
                                 "no warp-stall samples"));
  } else {
    stall_met = *op.memory_stall_fraction >= kMemoryStallThreshold && below_ridge;
    c.evidence.push_back(Measured("memory-stall fraction", *op.memory_stall_fraction,
                                  "fraction", stall_rule, stall_met));
  }
  if (um_met) {
    c.summary = absl::StrCat("memory-bound: U_m ", Number(*u.u_m), " ≥ ", ThresholdText(),
                             u.u_c ? absl::StrCat(" and > U_c ", Number(*u.u_c)) : "");
  } else if (stall_met) {
    c.summary = absl::StrCat("memory-bound: intensity ", Number(*u.intensity),
                             " FLOP/B < ridge ", Number(*u.ridge), " FLOP/B with memory-stall ",
                             "fraction ", Number(*op.memory_stall_fraction), " ≥ ",
                             Number(kMemoryStallThreshold));
  }
  return um_met || stall_met;
}

bool LatencyRule(const OperatorFigures& op, const HardwareEnvelope* env, const Utilizations& u,
                 Classification& c) {
  const std::string rule = absl::StrCat("< ", ThresholdText(), " (U_c and U_m both)");
  bool met = false;
  const bool c_high = u.u_c && *u.u_c >= kUtilizationThreshold;
  const bool m_high = u.u_m && *u.u_m >= kUtilizationThreshold;
  if (c_high || m_high) {
    // One known figure at or above the threshold already fails "both < 0.6".
    c.evidence.push_back(Measured("max(U_c, U_m)", std::max(u.u_c.value_or(0), u.u_m.value_or(0)),
                                  "fraction", rule, false));
  } else if (!u.u_c || !u.u_m) {
    c.evidence.push_back(Missing("max(U_c, U_m)", "fraction", rule,
                                 !u.u_c ? absl::StrCat("U_c: ", u.u_c_missing)
                                        : absl::StrCat("U_m: ", u.u_m_missing)));
  } else {
    met = true;
    c.evidence.push_back(Measured("max(U_c, U_m)", std::max(*u.u_c, *u.u_m), "fraction", rule,
                                  true));
  }
  // Why a kernel is latency-bound: fewer blocks than SMs is less than one wave.
  std::string grid_text;
  if (!op.max_grid_blocks || *op.max_grid_blocks <= 0) {
    c.evidence.push_back(Missing("grid blocks ÷ SMs", "", "< 1 (less than one wave)",
                                 "no launch geometry"));
  } else if (env == nullptr || env->sm_count <= 0) {
    c.evidence.push_back(Missing("grid blocks ÷ SMs", "", "< 1 (less than one wave)",
                                 env == nullptr ? "no hardware envelope" : "no SM count"));
  } else {
    const double waves = static_cast<double>(*op.max_grid_blocks) / env->sm_count;
    c.evidence.push_back(
        Measured("grid blocks ÷ SMs", waves, "", "< 1 (less than one wave)", waves < 1));
    grid_text = absl::StrCat("; largest grid ", *op.max_grid_blocks, " blocks on ",
                             env->sm_count, " SMs",
                             waves < 1 ? " (less than one wave)" : "");
  }
  if (met) {
    c.summary = absl::StrCat("latency-occupancy: U_c ", Number(*u.u_c), " and U_m ",
                             Number(*u.u_m), " both < ", ThresholdText(), grid_text);
  }
  return met;
}

}  // namespace

std::string_view BottleneckClassName(BottleneckClass c) {
  switch (c) {
    case BottleneckClass::kCommunication:
      return "communication";
    case BottleneckClass::kHostStarved:
      return "host-starved";
    case BottleneckClass::kLaunchOverhead:
      return "launch-overhead";
    case BottleneckClass::kComputeBound:
      return "compute-bound";
    case BottleneckClass::kMemoryBound:
      return "memory-bound";
    case BottleneckClass::kLatencyOccupancy:
      return "latency-occupancy";
    case BottleneckClass::kUnclassified:
      return "unclassified";
  }
  return "unclassified";
}

Classification Classify(const OperatorFigures& op, const HardwareEnvelope* envelope) {
  Classification c;
  const Utilizations u = ComputeUtilizations(op, envelope);
  c.u_compute = u.u_c;
  c.u_memory = u.u_m;
  c.intensity = u.intensity;
  c.ridge = u.ridge;
  // First match wins; later rules are not checked and leave no evidence.
  if (CommunicationRule(op, c)) {
    c.cls = BottleneckClass::kCommunication;
    return c;
  }
  if (HostStarvedRule(op, c)) {
    c.cls = BottleneckClass::kHostStarved;
    return c;
  }
  const size_t utilization_rows = c.evidence.size();  // where rule 3's evidence starts
  if (ComputeBoundRule(u, c)) {
    c.cls = BottleneckClass::kComputeBound;
  } else if (MemoryBoundRule(op, u, c)) {
    c.cls = BottleneckClass::kMemoryBound;
  } else if (LaunchOverheadRule(op, c)) {
    c.cls = BottleneckClass::kLaunchOverhead;
  } else if (LatencyRule(op, envelope, u, c)) {
    c.cls = BottleneckClass::kLatencyOccupancy;
  } else {
    c.cls = BottleneckClass::kUnclassified;
    // Rules 3, 4 and 6 cover every (U_c, U_m) pair, so reaching here means a figure was
    // missing; rules 1, 2 and 5 are sufficient conditions that just did not hold.
    std::vector<std::string> missing;
    for (size_t i = utilization_rows; i < c.evidence.size(); ++i) {
      const Evidence& e = c.evidence[i];
      if (e.figure == "kernels < 10 µs" || e.figure == "GPU time ÷ launch call time" ||
          e.figure == "idle before its kernels ÷ GPU time") {
        continue;
      }
      if (!e.missing.empty()) missing.push_back(absl::StrCat(e.figure, " (", e.missing, ")"));
    }
    c.summary = absl::StrCat("unclassified: missing ", absl::StrJoin(missing, ", "));
  }
  return c;
}

std::optional<double> PathPeak(const OperatorFigures& op, const HardwareEnvelope* envelope) {
  if (envelope == nullptr) return std::nullopt;
  return op.vector_path ? envelope->VectorPeakFlopsPerS(op.precision)
                        : envelope->PeakFlopsPerS(op.precision);
}

BottleneckClass ExpectedClass(const OperatorFigures& op, const HardwareEnvelope* envelope,
                              std::string* basis) {
  const Utilizations u = ComputeUtilizations(op, envelope);
  if (!u.intensity || !u.ridge) {
    if (basis != nullptr) *basis = !u.intensity ? u.intensity_missing : u.ridge_missing;
    return BottleneckClass::kUnclassified;
  }
  const bool compute = *u.intensity >= *u.ridge;
  if (basis != nullptr) {
    *basis = absl::StrCat("intensity ", Number(*u.intensity), " FLOP/B ",
                          compute ? "≥" : "<", " ridge ", Number(*u.ridge), " FLOP/B (",
                          op.vector_path ? "vector " : "tensor-core ",
                          std::string(PrecisionName(op.precision)), ")");
  }
  return compute ? BottleneckClass::kComputeBound : BottleneckClass::kMemoryBound;
}

}  // namespace opmap::analysis
