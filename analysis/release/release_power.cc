// The perf-per-watt validation row and rollback trigger (docs/metrics.md "Release
// recommendation"): requests per joule of GPU energy, candidate against baseline at equal
// load. Power is a property of the platform as much as of the revision, so both are
// compared only where both arms ran at the same throughput (within kLoadTolerance): a
// lighter load draws less and would flatter either arm.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/release/release_internal.h"

namespace opmap::analysis::release_internal {
namespace {

std::string PerJouleText(double rpj) { return absl::StrFormat("%.3g req/J", rpj); }

// " (12.1 tokens/J, 3.4 GFLOP/J)" where the arm has them.
std::string ExtraFigures(const Arm& a) {
  std::string s;
  if (a.tokens_per_joule) s += absl::StrFormat(", %.3g tokens/J", *a.tokens_per_joule);
  if (a.flops_per_joule) s += absl::StrFormat(", %.3g GFLOP/J", *a.flops_per_joule * 1e-9);
  if (a.gpu_watts) s += absl::StrFormat(", %.1f W", *a.gpu_watts);
  return s;
}

}  // namespace

ValidationRow PerfPerWattRow(const Context& c) {
  const ReleaseInputs& in = *c.in;
  ValidationRow row;
  row.metric = "perf per watt";
  row.unit = "req/J";
  row.criterion = absl::StrFormat("not > %.0f%% lower (relative) at equal load",
                                  kPerfPerWattDrop * 100);
  const auto& b = in.baseline.requests_per_joule;
  const auto& k = in.candidate.requests_per_joule;
  if (!b || !k) {
    row.status = RowStatus::kUnavailable;
    row.reason = MissingBoth(in, !b, !k, {"perf_per_watt"}, "GPU power");
    return row;
  }
  row.baseline = *b;
  row.candidate = *k;
  if (*b > 0) row.change = *k / *b - 1;
  if (!SameLoad(in.baseline.throughput_rps, in.candidate.throughput_rps)) {
    row.status = RowStatus::kUnavailable;
    row.reason = absl::StrFormat(
        "arms ran at different loads (%.2f vs %.2f req/s, > %.0f%% apart); perf per watt is "
        "compared at equal load",
        *in.baseline.throughput_rps, *in.candidate.throughput_rps, kLoadTolerance * 100);
    return row;
  }
  std::vector<std::string> failures;
  if (row.change && *row.change < -kPerfPerWattDrop) {
    failures.push_back(absl::StrFormat("%s vs baseline", SignedPercent(*row.change)));
  }
  Conclude(row, failures);
  return row;
}

Trigger PerfPerWattTrigger(const Context& c) {
  const ReleaseInputs& in = *c.in;
  Trigger t;
  t.name = std::string(kPerfPerWattTrigger);
  t.owner = std::string(OwnerRoleName(kRuntimeOwner));
  t.rule = absl::StrFormat(
      "candidate window requests per joule of GPU energy < baseline by more than %.0f%% "
      "(relative) at equal load (throughput within %.0f%%); holds after %d consecutive "
      "windows",
      kPerfPerWattDrop * 100, kLoadTolerance * 100, c.hold_windows);
  const auto& b = in.baseline.requests_per_joule;
  const auto& k = in.candidate.requests_per_joule;
  if (!b || !k || *b <= 0) {
    t.evaluable = false;
    t.evidence = b && *b <= 0 ? std::string("baseline perf per watt is 0")
                              : MissingBoth(in, !b, !k, {"perf_per_watt"}, "GPU power");
    return t;
  }
  const std::optional<double> base_load = in.baseline.throughput_rps;
  std::vector<bool> windows;
  int other_load = 0, without_power = 0;
  for (const ArmWindow& w : in.candidate.windows) {
    const bool same = SameLoad(WindowThroughput(w), base_load);
    other_load += !same;
    without_power += !w.requests_per_joule;
    windows.push_back(same && w.requests_per_joule && *w.requests_per_joule / *b - 1 <
                                                          -kPerfPerWattDrop);
  }
  const bool arm_same = SameLoad(in.baseline.throughput_rps, in.candidate.throughput_rps);
  const double change = *k / *b - 1;
  t.evidence = absl::StrFormat("%s%s vs baseline %s%s (%s)", PerJouleText(*k),
                               ExtraFigures(in.candidate), PerJouleText(*b),
                               ExtraFigures(in.baseline), SignedPercent(change));
  if (!arm_same) absl::StrAppend(&t.evidence, "; the arms ran at different loads");
  if (other_load > 0) {
    absl::StrAppend(&t.evidence, "; ", other_load,
                    " candidate window(s) at a different load not counted");
  }
  if (without_power > 0) {
    absl::StrAppend(&t.evidence, "; ", without_power, " candidate window(s) without GPU power");
  }
  Settle(t, c, arm_same && change < -kPerfPerWattDrop, windows);
  return t;
}

int64_t FirstWindowStart(const ReleaseInputs& in) {
  return FirstWindowStart(std::vector<NamedArm>{{"baseline", &in.baseline}, {"candidate", &in.candidate}});
}

int64_t FirstWindowStart(const std::vector<NamedArm>& arms) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto& [name, a] : arms) {
    for (const ArmWindow& w : a->windows) origin = std::min(origin, w.start_ns);
  }
  return origin;
}

DocPlot PerfPerWattPlot(const std::vector<NamedArm>& arms) {
  DocPlot plot;
  plot.id = "plot-perf-per-watt";
  plot.title = "perf per watt over time";
  plot.kind = PlotKind::kLine;
  plot.x_label = "window start (s since the first window)";
  plot.y_label = "requests per joule of GPU energy";
  const int64_t origin = FirstWindowStart(arms);
  bool any = false;
  for (const auto& [name, arm] : arms) {
    PlotSeries s;
    s.name = name;
    s.connect = true;
    for (const ArmWindow& w : arm->windows) {
      if (!w.requests_per_joule) continue;
      s.points.push_back({static_cast<double>(w.start_ns - origin) * 1e-9, *w.requests_per_joule,
                          w.gpu_watts ? absl::StrFormat("%s: %.1f W", w.id, *w.gpu_watts) : w.id});
    }
    any = any || !s.points.empty();
    plot.series.push_back(std::move(s));
  }
  if (!any) plot.unavailable = "no window has GPU power";
  return plot;
}

DocPlot PerfPerWattOverTime(const ReleaseInputs& in) {
  DocPlot plot = PerfPerWattPlot({{"baseline", &in.baseline}, {"candidate", &in.candidate}});
  if (!plot.unavailable.empty()) {
    const std::string why = MissingBoth(in, !in.baseline.requests_per_joule,
                                        !in.candidate.requests_per_joule, {"perf_per_watt"},
                                        "GPU power");
    if (!why.empty()) plot.unavailable = why;
  }
  return plot;
}

}  // namespace opmap::analysis::release_internal
