// Pieces of BuildMappingSheet shared by its files (not part of the bottleneck API).
#ifndef OPMAP_ANALYSIS_BOTTLENECK_SHEET_INTERNAL_H_
#define OPMAP_ANALYSIS_BOTTLENECK_SHEET_INTERNAL_H_

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/roofline/range_context.h"
#include "analysis/stalls/stall_summary.h"
#include "analysis/summary/event_layer_types.h"

namespace opmap::analysis::sheet {

using StreamMap = std::map<std::pair<int32_t, int64_t>, std::vector<size_t>>;

// Events of each (device, stream) in start order (trace order on ties, as idle_time.cc).
StreamMap StreamOrder(const Trace& trace);

void BuildFusion(const Trace& trace, const MappingResult& mapping, const EventLayerTypes& types,
                 const StreamMap& streams, const MappingSheetOptions& options,
                 MappingSheet& sheet);

using Geometry = std::tuple<std::array<int32_t, 3>, std::array<int32_t, 3>, int32_t, int64_t>;

struct KernelAcc {
  int64_t count = 0;
  int64_t gpu_time_ns = 0;
  std::map<Geometry, int64_t> geometries;  // ordered: ties resolve the same way every run
};

// What one group (or one operator: the sum of its groups) accumulated over its events.
struct GroupAcc {
  StringId name = kEmptyString;
  std::vector<int32_t> ranges;  // distinct instances, first-seen order
  absl::flat_hash_set<int32_t> range_set;
  int64_t gpu_time_ns = 0, kernels = 0, small = 0, small_ns = 0;
  absl::flat_hash_set<int32_t> launches;
  bool launch_unknown = false;
  int64_t idle_ns = 0, host_wait_ns = 0;
  bool host_wait_unknown = false;
  bool collective = false;
  int64_t non_overlapped_comm_ns = 0;
  int64_t max_grid_blocks = 0;
  int64_t iteration_ns = 0;
  // Nsight Compute rows joined to its kernels.
  int64_t measured_bytes_kernels = 0, measured_flops_kernels = 0;
  double measured_bytes = 0, measured_flops = 0;
  absl::flat_hash_map<StringId, KernelAcc> kernel_acc;
};

// Per kernel name: the memory-stall evidence, apportioned to groups by GPU time share.
struct StallInputs {
  absl::flat_hash_map<std::string, StallBreakdown> by_kernel;
  absl::flat_hash_map<std::string, int64_t> kernel_total_ns;
};
StallInputs StallsByKernel(const Trace& trace);

// The figures Classify needs from an accumulation, without FLOPs and bytes.
OperatorFigures TimingFigures(const Trace& trace, const GroupAcc& acc, const StallInputs& stalls,
                              std::vector<SheetKernel>* kernels, int64_t total_gpu_ns);

// The range a kernel's group is costed at: its mapped range, or for an implementation op
// (aten::_flash_attention_forward, aten::cudnn_convolution, ...) the enclosing caller of its
// family (roofline_owner.cc says why).
class RooflineOwners {
 public:
  explicit RooflineOwners(const Trace& trace);
  int32_t Owner(int32_t range);

 private:
  const Trace& trace_;
  std::map<std::pair<int64_t, int64_t>, std::vector<int32_t>> by_thread_;  // cpu ops by start
  absl::flat_hash_map<int32_t, int32_t> cache_;
};

// A group's cost, figures, expected and observed class. `contexts` gives each instance what
// the trace around it records (its serving step, a fused MoE's TopK).
SheetGroup FinishGroup(const Trace& trace, const GroupAcc& acc, StringId dims, StringId types,
                       StringId concrete, LayerType layer_type, const StallInputs& stalls,
                       const MappingSheetOptions& options, int64_t total_gpu_ns,
                       const RangeContexts& contexts);

}  // namespace opmap::analysis::sheet

#endif  // OPMAP_ANALYSIS_BOTTLENECK_SHEET_INTERNAL_H_
