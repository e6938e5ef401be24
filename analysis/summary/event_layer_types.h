// Per-GPU-event classification that `opmap analyze` (Summarize) and the collector's
// rollups (BuildRollup) must agree on, so it lives in one place:
//   - each event's layer type: its operator's when a mapping rule placed it in an
//     operator range, else its own kernel name's (docs/metrics.md "Kernel type and layer type");
//   - each operator name's layer type: the operator-name rule when one matches, else the
//     layer type holding most of its kernels' GPU time (by the kernels' own names);
//   - each event's compute flag for the device breakdown (HTA kernel type computation).
// Thread-compatible: reads the trace and the mapping only.
#ifndef OPMAP_ANALYSIS_SUMMARY_EVENT_LAYER_TYPES_H_
#define OPMAP_ANALYSIS_SUMMARY_EVENT_LAYER_TYPES_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

struct OperatorLayerType {
  LayerType layer_type = LayerType::kOther;
  bool from_name = false;  // the operator-name rule matched (else kernel majority)
};

struct EventLayerTypes {
  // Parallel to trace.gpu_events.
  std::vector<LayerType> layer_type;
  // A bool array (not vector<bool>) so it can be viewed as a span for
  // ComputeDeviceBreakdown.
  std::unique_ptr<bool[]> is_compute;
  size_t event_count = 0;
  // By operator name (StringId of trace.strings), for every operator that owns at least
  // one GPU event.
  absl::flat_hash_map<StringId, OperatorLayerType> operator_types;

  absl::Span<const bool> compute_flags() const {
    return absl::Span<const bool>(is_compute.get(), event_count);
  }
};

// GPU time per layer type, indexed by static_cast<int>(LayerType).
using LayerTimes = std::array<int64_t, kNumLayerTypes>;

// The layer type with the most time; ties go to the lower enum value (the earlier
// docs/metrics.md row), an all-zero array to the first row.
LayerType HeaviestLayerType(const LayerTimes& times);

EventLayerTypes ClassifyGpuEvents(const Trace& trace, const MappingResult& mapping);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_EVENT_LAYER_TYPES_H_
