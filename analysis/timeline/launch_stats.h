// CUDA launch statistics as HolisticTraceAnalysis computes them
// (CudaKernelAnalysis.cuda_kernel_launch_stats, reached through
// TraceAnalysis.get_cuda_kernel_launch_stats; HTA 0.6.x):
//
//   Launches are the API calls named cudaLaunchKernel, cudaLaunchKernelExC, and (MTIA)
//   "runFunction - job_prep_and_submit_for_execution", plus cudaMemcpyAsync and
//   cudaMemsetAsync when include_memory_events (HTA's default). Driver-API launches
//   (cuLaunchKernel), cudaGraphLaunch and ROCm hip* calls are NOT counted. Each launch is
//   paired with every GPU event of its correlation id (an inner join: calls with no GPU
//   event, e.g. a synchronous cudaMemsetAsync, drop out). Per pair:
//     cpu_duration = API call duration
//     gpu_duration = GPU event duration
//     launch_delay = max(0, GPU start - API end)   (= ts_gpu - ts_cpu - dur_cpu, clipped)
//   Summary per metric: count, mean, std, min, p50, p95, p99, max (pandas describe).
//
// Thread-compatible: reads the trace only.
#ifndef OPMAP_ANALYSIS_TIMELINE_LAUNCH_STATS_H_
#define OPMAP_ANALYSIS_TIMELINE_LAUNCH_STATS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "analysis/model/trace.h"
#include "analysis/timeline/describe.h"

namespace opmap::analysis {

struct LaunchStatsOptions {
  bool include_memory_events = true;  // count cudaMemcpyAsync / cudaMemsetAsync (HTA default)
};

// True when HTA counts an API call of this name as a launch.
bool IsHtaLaunchApi(std::string_view name, bool include_memory_events);

struct LaunchRecord {
  int32_t gpu_event = -1;  // index into Trace::gpu_events
  int32_t api_call = -1;   // index into Trace::api_calls
  int64_t cpu_duration_ns = 0;
  int64_t gpu_duration_ns = 0;
  int64_t launch_delay_ns = 0;  // clipped at 0
};

struct LaunchStatsSummary {
  std::vector<LaunchRecord> launches;  // in Trace::gpu_events order
  int64_t clipped_delay_count = 0;     // launches whose GPU event began before the call returned
  DescriptiveStats cpu_duration_ns;
  DescriptiveStats gpu_duration_ns;
  DescriptiveStats launch_delay_ns;
};

// `launch_api_index[i]`: index into trace.api_calls of gpu_events[i]'s launch (by
// correlation; MappingResult::LaunchApiIndex()), -1 when unknown. Entries missing from a
// short span, or out of range, count as unknown (no launch record).
// Launch statistics over a trace given whole or in parts (every launch with its GPU event
// in the same part). Keeps the distinct durations, not the launches.
class LaunchStatsAccumulator {
 public:
  explicit LaunchStatsAccumulator(const LaunchStatsOptions& options = {},
                                  stats::ValueBudget* budget = nullptr)
      : options_(options), cpu_(budget), gpu_(budget), delay_(budget) {}
  // `records`, when given, receives the part's launches (indices into `part`).
  void Add(const Trace& part, absl::Span<const int32_t> launch_api_index,
           std::vector<LaunchRecord>* records = nullptr);
  // The statistics; `launches` is left empty.
  LaunchStatsSummary Finish() const;

 private:
  LaunchStatsOptions options_;
  int64_t clipped_delay_count_ = 0;
  stats::ValueCounts cpu_, gpu_, delay_;
};

LaunchStatsSummary ComputeLaunchStats(const Trace& trace,
                                      absl::Span<const int32_t> launch_api_index,
                                      const LaunchStatsOptions& options = {});

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TIMELINE_LAUNCH_STATS_H_
