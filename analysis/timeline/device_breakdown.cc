#include "analysis/timeline/device_breakdown.h"

#include <algorithm>
#include <map>

#include "analysis/timeline/interval_union.h"

namespace opmap::analysis {
namespace {

struct Accumulator {
  DeviceBreakdown row;
  std::vector<Interval> all;
  std::vector<Interval> compute;
};

}  // namespace

std::vector<DeviceBreakdown> ComputeDeviceBreakdown(const Trace& trace,
                                                    absl::Span<const bool> is_compute) {
  // std::map: few devices, and it hands them back sorted.
  std::map<int32_t, Accumulator> by_device;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& e = trace.gpu_events[i];
    auto [it, inserted] = by_device.try_emplace(e.device);
    Accumulator& acc = it->second;
    if (inserted) {
      acc.row.device = e.device;
      acc.row.first_start_ns = e.start_ns;
      acc.row.last_end_ns = e.end_ns();
    }
    acc.row.first_start_ns = std::min(acc.row.first_start_ns, e.start_ns);
    acc.row.last_end_ns = std::max(acc.row.last_end_ns, e.end_ns());
    ++acc.row.event_count;
    acc.all.push_back({e.start_ns, e.end_ns()});
    const bool compute =
        e.kind == GpuEventKind::kKernel && i < is_compute.size() && is_compute[i];
    if (compute) {
      ++acc.row.compute_event_count;
      acc.compute.push_back({e.start_ns, e.end_ns()});
    }
  }

  std::vector<DeviceBreakdown> out;
  out.reserve(by_device.size());
  for (auto& [device, acc] : by_device) {
    DeviceBreakdown& r = acc.row;
    r.span_ns = r.last_end_ns - r.first_start_ns;
    r.busy_ns = UnionLength(absl::MakeSpan(acc.all));
    r.idle_ns = r.span_ns - r.busy_ns;
    r.compute_ns = UnionLength(absl::MakeSpan(acc.compute));
    r.non_compute_ns = r.busy_ns - r.compute_ns;
    out.push_back(r);
  }
  return out;
}

void MergeDeviceBreakdown(const std::vector<DeviceBreakdown>& part,
                          std::vector<DeviceBreakdown>* into) {
  for (const DeviceBreakdown& p : part) {
    auto it = std::lower_bound(into->begin(), into->end(), p.device,
                               [](const DeviceBreakdown& r, int32_t d) { return r.device < d; });
    if (it == into->end() || it->device != p.device) {
      into->insert(it, p);
      continue;
    }
    DeviceBreakdown& r = *it;
    r.event_count += p.event_count;
    r.compute_event_count += p.compute_event_count;
    r.first_start_ns = std::min(r.first_start_ns, p.first_start_ns);
    r.last_end_ns = std::max(r.last_end_ns, p.last_end_ns);
    r.span_ns = r.last_end_ns - r.first_start_ns;
    r.busy_ns += p.busy_ns;
    r.idle_ns = r.span_ns - r.busy_ns;
    r.compute_ns += p.compute_ns;
    r.non_compute_ns = r.busy_ns - r.compute_ns;
  }
}

}  // namespace opmap::analysis
