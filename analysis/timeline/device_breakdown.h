// Per-device GPU time breakdown (docs/metrics.md "GPU time on one device"): span, busy (union
// of all GPU event intervals), idle = span - busy, compute (union of computation kernels),
// non-compute = busy - compute. Interval algebra on integer ns, never summed durations.
// Equals HTA's temporal breakdown with its timestamp rounding off (reference/hta/*_noround:
// idle_time / compute_time / non_compute_time / kernel_time), HTA being per rank.
// Thread-compatible: reads the trace only.
#ifndef OPMAP_ANALYSIS_TIMELINE_DEVICE_BREAKDOWN_H_
#define OPMAP_ANALYSIS_TIMELINE_DEVICE_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/types/span.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

struct DeviceBreakdown {
  int32_t device = 0;
  int64_t event_count = 0;          // kernels + memcpy + memset on this device
  int64_t compute_event_count = 0;  // those counted as compute
  int64_t first_start_ns = 0;       // earliest GPU event start
  int64_t last_end_ns = 0;          // latest GPU event end
  int64_t span_ns = 0;              // last_end_ns - first_start_ns
  int64_t busy_ns = 0;              // union of all GPU event intervals
  int64_t idle_ns = 0;              // span_ns - busy_ns
  int64_t compute_ns = 0;           // union of compute kernels
  int64_t non_compute_ns = 0;       // busy_ns - compute_ns
};

// One entry per device that has GPU events, sorted by device. `is_compute[i]` says whether
// trace.gpu_events[i] is a computation kernel (the caller decides with the taxonomy: not
// communication, not memcpy/memset); only events of kind kKernel can count as compute, so
// a memcpy/memset flagged true is still non-compute. Entries missing from a short span
// count as false. Zero-length events count in event_count and span but add no time.
std::vector<DeviceBreakdown> ComputeDeviceBreakdown(const Trace& trace,
                                                    absl::Span<const bool> is_compute);

// The breakdown over a trace given whole or in parts in time order: every GPU event of a
// part starts no earlier than any event of the parts before (an event may run past the
// cut: the unions carry their end from part to part).
class DeviceBreakdownAccumulator {
 public:
  void Add(const Trace& part, absl::Span<const bool> is_compute);
  std::vector<DeviceBreakdown> Finish() const;

 private:
  struct Device {
    DeviceBreakdown row;
    int64_t busy_until = INT64_MIN;
    int64_t compute_until = INT64_MIN;
  };
  std::map<int32_t, Device> devices_;  // sorted: rows come out in device order
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TIMELINE_DEVICE_BREAKDOWN_H_
