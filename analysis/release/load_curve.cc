#include "analysis/release/load_curve.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace opmap::analysis {
namespace {

bool Within(const std::optional<double>& ns, const std::optional<double>& sla_ms) {
  return !sla_ms || (ns && *ns <= *sla_ms * 1e6);
}

}  // namespace

LoadCurve BuildLoadCurve(const Arm& arm, const WorkloadProfile* profile) {
  LoadCurve c;
  for (size_t i = 0; i < arm.windows.size(); ++i) {
    const ArmWindow& w = arm.windows[i];
    if (w.end_ns <= w.start_ns || !w.p99_ns) continue;
    LoadPoint p;
    p.window = w.id;
    p.window_index = i;
    p.start_ns = w.start_ns;
    p.requests = w.requests;
    p.throughput_rps = static_cast<double>(w.requests) / (static_cast<double>(w.end_ns - w.start_ns) * 1e-9);
    p.p50_ns = w.p50_ns;
    p.p95_ns = w.p95_ns;
    p.p99_ns = w.p99_ns;
    p.gpu_watts = w.gpu_watts;
    p.requests_per_joule = w.requests_per_joule;
    p.meets_sla = profile != nullptr && profile->sla_p99_ms && Within(p.p99_ns, profile->sla_p99_ms) &&
                  Within(p.p95_ns, profile->sla_p95_ms) && Within(p.p50_ns, profile->sla_p50_ms);
    c.points.push_back(std::move(p));
  }
  std::stable_sort(c.points.begin(), c.points.end(), [](const LoadPoint& a, const LoadPoint& b) {
    return a.throughput_rps < b.throughput_rps;
  });
  if (c.points.empty()) {
    c.knee_unavailable = "no window has a duration and a p99";
    return c;
  }
  if (profile == nullptr || !profile->sla_p99_ms) {
    c.knee_unavailable = "no sla_p99_ms in the workload profile";
    return c;
  }
  for (size_t i = c.points.size(); i-- > 0;) {
    if (c.points[i].meets_sla) {
      c.knee = i;
      return c;
    }
  }
  const auto lowest = std::min_element(c.points.begin(), c.points.end(),
                                       [](const LoadPoint& a, const LoadPoint& b) {
                                         return *a.p99_ns < *b.p99_ns;
                                       });
  c.knee_unavailable = absl::StrFormat(
      "no window meets the SLA (p99 ≤ %g ms); the lowest p99 is %.2f ms at %.1f req/s",
      *profile->sla_p99_ms, *lowest->p99_ns / 1e6, lowest->throughput_rps);
  return c;
}

}  // namespace opmap::analysis
