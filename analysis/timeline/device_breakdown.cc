#include "analysis/timeline/device_breakdown.h"

#include <algorithm>
#include <map>

#include "analysis/timeline/interval_union.h"

namespace opmap::analysis {

void DeviceBreakdownAccumulator::Add(const Trace& part, absl::Span<const bool> is_compute) {
  std::map<int32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> by_device;
  for (size_t i = 0; i < part.gpu_events.size(); ++i) {
    const GpuEvent& e = part.gpu_events[i];
    auto [it, inserted] = devices_.try_emplace(e.device);
    DeviceBreakdown& row = it->second.row;
    if (inserted || row.event_count == 0) {
      row.device = e.device;
      row.first_start_ns = e.start_ns;
      row.last_end_ns = e.end_ns();
    }
    row.first_start_ns = std::min(row.first_start_ns, e.start_ns);
    row.last_end_ns = std::max(row.last_end_ns, e.end_ns());
    ++row.event_count;
    auto& [all, compute] = by_device[e.device];
    all.push_back({e.start_ns, e.end_ns()});
    if (e.kind == GpuEventKind::kKernel && i < is_compute.size() && is_compute[i]) {
      ++row.compute_event_count;
      compute.push_back({e.start_ns, e.end_ns()});
    }
  }
  for (auto& [device, intervals] : by_device) {
    Device& d = devices_[device];
    d.row.busy_ns += UnionLengthAfter(absl::MakeSpan(intervals.first), &d.busy_until);
    d.row.compute_ns += UnionLengthAfter(absl::MakeSpan(intervals.second), &d.compute_until);
  }
}

std::vector<DeviceBreakdown> DeviceBreakdownAccumulator::Finish() const {
  std::vector<DeviceBreakdown> out;
  out.reserve(devices_.size());
  for (const auto& [device, d] : devices_) {
    DeviceBreakdown r = d.row;
    r.span_ns = r.last_end_ns - r.first_start_ns;
    r.idle_ns = r.span_ns - r.busy_ns;
    r.non_compute_ns = r.busy_ns - r.compute_ns;
    out.push_back(r);
  }
  return out;
}

std::vector<DeviceBreakdown> ComputeDeviceBreakdown(const Trace& trace,
                                                    absl::Span<const bool> is_compute) {
  DeviceBreakdownAccumulator acc;
  acc.Add(trace, is_compute);
  return acc.Finish();
}

}  // namespace opmap::analysis
