// The operator-to-kernel mapping sheet (docs/metrics.md "Roofline groups"): per operator
// group — (operator, input dims, dtypes, concrete inputs), as TraceLens groups — its
// instances, GPU time, FLOPs (executed and model), bytes and their source, intensity,
// achieved FLOP/s and bytes/s, U_c, U_m, the roofline's expected class and the observed
// class with evidence; per operator the aggregate of its groups with its kernels' launch
// geometry (grid/block = tiling), registers and shared memory; and fusion candidates (runs
// of small elementwise / norm kernels between larger kernels, on one stream).
#ifndef OPMAP_ANALYSIS_BOTTLENECK_MAPPING_SHEET_H_
#define OPMAP_ANALYSIS_BOTTLENECK_MAPPING_SHEET_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bottleneck/bottleneck_class.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/model/trace.h"
#include "analysis/report/document.h"
#include "common/text/json_writer.h"
#include "analysis/roofline/op_cost.h"

namespace opmap::analysis {

struct SheetKernel {
  std::string name;
  int64_t count = 0;
  std::array<int32_t, 3> grid = {0, 0, 0};   // of its most frequent launch geometry
  std::array<int32_t, 3> block = {0, 0, 0};
  int32_t registers_per_thread = -1;         // -1 unknown
  int64_t shared_memory_bytes = kNone;       // kNone unknown
  int64_t gpu_time_ns = 0;
  double share = 0;                          // of the trace's summed GPU time
};

struct SheetGroup {
  std::string op;                            // operator name
  // The grouping key as the trace writes it ("" when not recorded).
  std::string input_dims, input_type, concrete_inputs;
  LayerType layer_type = LayerType::kOther;
  int64_t instances = 0;
  int64_t gpu_time_ns = 0;
  double share = 0;                          // of the trace's summed GPU time
  // Executed and model FLOPs and bytes summed over the instances, with their sources,
  // family, formulas (of one instance) and why a figure is absent.
  OpCost cost;
  std::string precision_source;              // "Input type", "kernel name", "int dtype", ...
  std::optional<double> achieved_flops_per_s, achieved_bytes_per_s;
  BottleneckClass expected = BottleneckClass::kUnclassified;
  std::string expected_basis;                // the intensity vs ridge comparison, or why none
  Classification observed;
  OperatorFigures figures;
  std::vector<SheetKernel> kernels;          // GPU time, descending
};

struct SheetOperator {
  std::string name;
  LayerType layer_type = LayerType::kOther;
  int64_t instances = 0;
  int64_t gpu_time_ns = 0;
  double share = 0;                          // of the trace's summed GPU time
  std::optional<double> flops;               // Σ over instances, from shapes
  std::string flops_formula;                 // of one instance, or why unavailable
  std::optional<double> intensity;           // FLOP/byte, when bytes are known
  // Where the bytes came from: "compulsory bytes from shapes" (inputs read once, outputs
  // written once), "NVTX payload", "Nsight Compute (measured)", or a mix of them.
  std::string bytes_basis;
  BottleneckClass expected = BottleneckClass::kUnclassified;  // roofline of the aggregate
  Classification observed;                   // of the aggregate figures
  std::vector<int32_t> groups;               // indices into MappingSheet::groups
  // GPU time of its groups per observed class (index = BottleneckClass).
  std::array<int64_t, 7> class_time_ns = {0, 0, 0, 0, 0, 0, 0};
  // The figures `observed` was classified from, so the sheet's rows can go straight into
  // ProposeMitigations (MitigationInput{figures, observed}).
  OperatorFigures figures;
  std::vector<SheetKernel> kernels;          // GPU time, descending
};

struct FusionCandidate {
  std::vector<std::string> operators;        // the run's operators, in launch order
  std::vector<std::string> kernels;          // the run's kernels, in launch order
  int64_t occurrences = 0;                   // how often this exact run appears
  int64_t gpu_time_ns = 0;                   // Σ over occurrences
  int32_t stream = 0;
  std::string before, after;                 // the larger kernels around the run
  // Upper bound of what fusing saves: the run's launches minus one, × their mean GPU time
  // floor (each fused launch still reads/writes its data once), as ns over all occurrences.
  // Exactly: Σ over occurrences of (Σ durations − Σ durations ÷ L), integer ns, L = run
  // length. GPU time only: idle gaps inside a run belong to the host-wait and
  // launch-overhead bounds, so the two are never counted twice.
  int64_t saving_bound_ns = 0;
};

struct MappingSheet {
  std::vector<SheetOperator> operators;      // GPU time, descending
  std::vector<SheetGroup> groups;            // GPU time, descending
  std::vector<FusionCandidate> fusion;       // saving_bound_ns, descending
  int64_t gpu_time_ns = 0;
  // Coverage: GPU time of groups with both FLOPs and bytes, and of groups given a class
  // other than unclassified, out of mapped_ns (GPU time mapped to an operator: an event
  // with no operator, e.g. launched before the capture window, can be in no group).
  int64_t mapped_ns = 0;
  int64_t costed_ns = 0;
  int64_t classified_ns = 0;
  std::vector<std::string> notes;            // conventions and what was unavailable
};

struct MappingSheetOptions {
  const HardwareEnvelope* envelope = nullptr;  // null: utilization rules missing
  // A kernel counts as "large" (a fusion-run boundary) at or above this duration.
  int64_t large_kernel_ns = 20'000;
  int32_t min_run_length = 2;                  // kernels in a fusion candidate run
};

MappingSheet BuildMappingSheet(const Trace& trace, const MappingResult& mapping,
                               const MappingSheetOptions& options);

void WriteMappingSheetJson(const MappingSheet& sheet, text::JsonWriter& w);
DocSection MappingSheetSection(const MappingSheet& sheet, int top_operators);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_BOTTLENECK_MAPPING_SHEET_H_
