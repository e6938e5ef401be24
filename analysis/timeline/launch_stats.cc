#include "analysis/timeline/launch_stats.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace opmap::analysis {

bool IsHtaLaunchApi(std::string_view name, bool include_memory_events) {
  if (name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" ||
      name == "runFunction - job_prep_and_submit_for_execution") {
    return true;
  }
  return include_memory_events && (name == "cudaMemcpyAsync" || name == "cudaMemsetAsync");
}

void LaunchStatsAccumulator::Add(const Trace& part, absl::Span<const int32_t> launch_api_index,
                                 std::vector<LaunchRecord>* records) {
  // Decide once per distinct API name, not per call.
  absl::flat_hash_map<StringId, bool> is_launch;
  auto counts = [&](StringId name) {
    auto [it, inserted] = is_launch.try_emplace(name, false);
    if (inserted) it->second = IsHtaLaunchApi(part.strings.Get(name), options_.include_memory_events);
    return it->second;
  };
  const size_t n = std::min(part.gpu_events.size(), launch_api_index.size());
  for (size_t i = 0; i < n; ++i) {
    const int32_t api = launch_api_index[i];
    if (api < 0 || static_cast<size_t>(api) >= part.api_calls.size()) continue;
    const ApiCall& call = part.api_calls[api];
    if (!counts(call.name)) continue;
    const GpuEvent& e = part.gpu_events[i];
    LaunchRecord r;
    r.gpu_event = static_cast<int32_t>(i);
    r.api_call = api;
    r.cpu_duration_ns = call.dur_ns;
    r.gpu_duration_ns = e.dur_ns;
    const int64_t raw_delay = e.start_ns - call.end_ns();
    if (raw_delay < 0) ++clipped_delay_count_;
    r.launch_delay_ns = std::max<int64_t>(0, raw_delay);
    cpu_.Add(r.cpu_duration_ns);
    gpu_.Add(r.gpu_duration_ns);
    delay_.Add(r.launch_delay_ns);
    if (records != nullptr) records->push_back(r);
  }
}

LaunchStatsSummary LaunchStatsAccumulator::Finish() const {
  LaunchStatsSummary s;
  s.clipped_delay_count = clipped_delay_count_;
  s.cpu_duration_ns = DescribeCounts(cpu_);
  s.gpu_duration_ns = DescribeCounts(gpu_);
  s.launch_delay_ns = DescribeCounts(delay_);
  return s;
}

LaunchStatsSummary ComputeLaunchStats(const Trace& trace,
                                      absl::Span<const int32_t> launch_api_index,
                                      const LaunchStatsOptions& options) {
  LaunchStatsAccumulator acc(options);
  std::vector<LaunchRecord> records;
  acc.Add(trace, launch_api_index, &records);
  LaunchStatsSummary s = acc.Finish();
  s.launches = std::move(records);
  return s;
}

}  // namespace opmap::analysis
