// The latency–throughput curve of one arm from the capture windows a collector holds
// (docs/metrics.md "Latency–throughput curve"): each window is one load point (its
// throughput = requests ÷ window seconds, against its p50/p95/p99), and the knee is the
// highest-throughput point that meets the workload profile's SLA.
#ifndef OPMAP_ANALYSIS_RELEASE_LOAD_CURVE_H_
#define OPMAP_ANALYSIS_RELEASE_LOAD_CURVE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/workload/workload_profile.h"
#include "analysis/release/release_recommendation.h"

namespace opmap::analysis {

struct LoadPoint {
  std::string window;               // "agent/session"
  size_t window_index = 0;          // into Arm::windows
  int64_t start_ns = 0;
  uint64_t requests = 0;
  double throughput_rps = 0;
  std::optional<double> p50_ns, p95_ns, p99_ns;
  std::optional<double> gpu_watts, requests_per_joule;
  // p99 ≤ sla_p99_ms, and p95 / p50 within theirs when the profile sets them; false
  // without an SLA.
  bool meets_sla = false;
};

struct LoadCurve {
  std::vector<LoadPoint> points;    // ascending throughput (ties: earlier window first)
  std::optional<size_t> knee;       // index into points
  // Why there is no knee ("no sla_p99_ms in the workload profile", "no window meets ...").
  std::string knee_unavailable;
};

// Windows without a positive duration or without a p99 are not load points.
LoadCurve BuildLoadCurve(const Arm& arm, const WorkloadProfile* profile);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_LOAD_CURVE_H_
