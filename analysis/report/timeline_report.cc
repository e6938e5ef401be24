#include "analysis/report/timeline_report.h"

#include "absl/strings/str_format.h"

#include "analysis/report/report_fields.h"

namespace opmap::analysis {
namespace {

using report_fields::Us;

constexpr const char* kNoLaunches =
    "no CUDA runtime launch paired with a GPU event (HTA counts cudaLaunchKernel, "
    "cudaLaunchKernelExC, cudaMemcpyAsync and cudaMemsetAsync; not cuLaunchKernel or hip*)";

constexpr const char* kLaunchMetrics[] = {"cpu_duration", "gpu_duration", "launch_delay"};

const DescriptiveStats& Metric(const LaunchStatsSummary& l, int i) {
  return i == 0 ? l.cpu_duration_ns : i == 1 ? l.gpu_duration_ns : l.launch_delay_ns;
}

}  // namespace

void TimelineJson(text::JsonWriter& w, const std::vector<StreamIdleTime>& idle,
                  const LaunchStatsSummary& launch) {
  w.Key("idle_time").BeginArray();
  for (const StreamIdleTime& s : idle) {
    w.BeginObject();
    w.Field("device", static_cast<int64_t>(s.device)).Field("stream", s.stream);
    w.Field("idle_us", Us(s.idle_ns));
    for (int c = 0; c < kIdleCategoryCount; ++c) {
      std::string_view name = IdleCategoryName(static_cast<IdleCategory>(c));
      w.Field(absl::StrFormat("%s_us", name), Us(s.category_ns[c]));
      w.Field(absl::StrFormat("%s_ratio", name), s.ratio[c], 6);
      w.Field(absl::StrFormat("%s_intervals", name), s.interval_count[c]);
    }
    w.Field("events_without_launch", s.unknown_launch_count);
    w.EndObject();
  }
  w.EndArray();
  w.Key("launch_stats").BeginObject();
  w.Field("count", launch.cpu_duration_ns.count);
  if (launch.cpu_duration_ns.count == 0) {
    // No samples: the statistics don't exist (printing 0 would claim zero-cost launches).
    w.Field("unavailable", kNoLaunches);
    w.EndObject();
    return;
  }
  w.Field("launch_delay_clipped_at_zero", launch.clipped_delay_count);
  for (int i = 0; i < 3; ++i) {
    const DescriptiveStats& d = Metric(launch, i);
    w.Key(kLaunchMetrics[i]).BeginObject();
    w.Field("mean_us", Us(d.mean)).Field("min_us", Us(d.min));
    w.Field("p50_us", Us(d.p50)).Field("p95_us", Us(d.p95)).Field("p99_us", Us(d.p99));
    w.Field("max_us", Us(d.max));
    w.EndObject();
  }
  w.EndObject();
}

std::string TimelineTable(const std::vector<StreamIdleTime>& idle,
                          const LaunchStatsSummary& launch) {
  std::string out;
  absl::StrAppendFormat(&out, "\nidle time per stream (HTA categories)\n%-8s %-8s %14s %14s %14s %14s\n",
                        "device", "stream", "idle_us", "host_wait_us", "kernel_wait_us",
                        "other_us");
  for (const StreamIdleTime& s : idle) {
    absl::StrAppendFormat(&out, "%-8d %-8d %14.3f %14.3f %14.3f %14.3f\n", s.device, s.stream,
                          Us(s.idle_ns), Us(s.ns(IdleCategory::kHostWait)),
                          Us(s.ns(IdleCategory::kKernelWait)), Us(s.ns(IdleCategory::kOther)));
  }
  absl::StrAppendFormat(&out, "\nCUDA launches (runtime API, HTA definition): %d\n",
                        launch.cpu_duration_ns.count);
  if (launch.cpu_duration_ns.count == 0) {
    absl::StrAppendFormat(&out, "launch statistics: unavailable: %s\n", kNoLaunches);
    return out;
  }
  absl::StrAppendFormat(&out, "%-14s %10s %10s %10s %10s %10s\n", "metric", "mean_us",
                        "p50_us", "p95_us", "p99_us", "max_us");
  for (int i = 0; i < 3; ++i) {
    const DescriptiveStats& d = Metric(launch, i);
    absl::StrAppendFormat(&out, "%-14s %10.3f %10.3f %10.3f %10.3f %10.3f\n", kLaunchMetrics[i],
                          Us(d.mean), Us(d.p50), Us(d.p95), Us(d.p99), Us(d.max));
  }
  return out;
}

}  // namespace opmap::analysis
