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

LaunchStatsSummary ComputeLaunchStats(const Trace& trace,
                                      absl::Span<const int32_t> launch_api_index,
                                      const LaunchStatsOptions& options) {
  // Decide once per distinct API name, not per call.
  absl::flat_hash_map<StringId, bool> is_launch;
  auto counts = [&](StringId name) {
    auto [it, inserted] = is_launch.try_emplace(name, false);
    if (inserted) it->second = IsHtaLaunchApi(trace.strings.Get(name), options.include_memory_events);
    return it->second;
  };

  LaunchStatsSummary s;
  std::vector<int64_t> cpu, gpu, delay;
  const size_t n = std::min(trace.gpu_events.size(), launch_api_index.size());
  for (size_t i = 0; i < n; ++i) {
    const int32_t api = launch_api_index[i];
    if (api < 0 || static_cast<size_t>(api) >= trace.api_calls.size()) continue;
    const ApiCall& call = trace.api_calls[api];
    if (!counts(call.name)) continue;
    const GpuEvent& e = trace.gpu_events[i];
    LaunchRecord r;
    r.gpu_event = static_cast<int32_t>(i);
    r.api_call = api;
    r.cpu_duration_ns = call.dur_ns;
    r.gpu_duration_ns = e.dur_ns;
    const int64_t raw_delay = e.start_ns - call.end_ns();
    if (raw_delay < 0) ++s.clipped_delay_count;
    r.launch_delay_ns = std::max<int64_t>(0, raw_delay);
    cpu.push_back(r.cpu_duration_ns);
    gpu.push_back(r.gpu_duration_ns);
    delay.push_back(r.launch_delay_ns);
    s.launches.push_back(r);
  }
  s.cpu_duration_ns = Describe(std::move(cpu));
  s.gpu_duration_ns = Describe(std::move(gpu));
  s.launch_delay_ns = Describe(std::move(delay));
  return s;
}

}  // namespace opmap::analysis
