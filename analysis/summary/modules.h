// ModuleSummary: GPU time by module — the model's layers as the source names them — beside
// docs/metrics.md's layer type (users say "layer" for both; eager attention is matmul + softmax
// by layer type but Attention by module).
//
// Module ranges (host ranges that name a module):
//   - Kineto python_function `nn.Module: Owlv2Attention_3` → module `Owlv2Attention_3`;
//   - an NVTX range that encloses another operator range on its thread (by time nesting)
//     and is not itself an operator name: `decoder_layer.3`, or a hook range naming its
//     module in parentheses, `FSDP::pre_forward (blocks.12._checkpoint_wrapped_module)` →
//     module `blocks.12._checkpoint_wrapped_module`; a module path and its class,
//     `model.layers.0.mlp (LlamaMLP)` (opmap_torch's ranges, import/nvtx_names.h), is
//     that module, named so, of type `LlamaMLP`. Names with `:` outside such
//     parentheses (`aten::linear`, `c10d::allreduce_`, `nccl:all_reduce`) are operators;
//     names with `#` (`ProfilerStep#3`, `Optimizer.step#SGD.step`) and
//     `record_param_comms` are the framework's own annotations, not modules. Other
//     enclosing ranges count (`FlashAttnFunc`, a user's `encoder`). TensorRT layer ranges
//     (`/layer1/layer1.0/conv1/Conv + ...`) launch their kernels directly, so they are
//     operators, and a TensorRT engine has modules only where a range encloses them.
// Module type: the class where the name gives one (`model.layers.0.mlp (LlamaMLP)` →
// `LlamaMLP`); else the module's kind with instance indices dropped — split the name on `.`,
// drop all-digit components and wrapper attributes (components starting with `_`, e.g.
// `_checkpoint_wrapped_module`, `_fsdp_wrapped_module`), then drop a trailing `_<digits>`:
// `Owlv2Attention_3` → `Owlv2Attention`, `blocks.12._checkpoint_wrapped_module` → `blocks`,
// `encoder.block.9.layer.1` → `encoder.block.layer`.
//
// Attribution: a GPU event mapped to an operator range belongs to the innermost module
// range on the operator's (process, thread) that wholly encloses the operator range (the
// operator range itself when it is a module range). Each event counts once, so per-module
// GPU time plus the mapped time outside any module adds up to the mapped GPU time; a
// module's time excludes what its inner modules launched (self time, like host_ranges).
// Unmapped events have no operator and so no module: they are counted apart.
#ifndef OPMAP_ANALYSIS_SUMMARY_MODULES_H_
#define OPMAP_ANALYSIS_SUMMARY_MODULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/stalls/stall_summary.h"
#include "absl/container/flat_hash_map.h"
#include "analysis/stats/quantiles.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/part_ranges.h"

namespace opmap::analysis {

struct ModuleStats {
  std::string name;         // e.g. "BertLayer_3", "blocks.12._checkpoint_wrapped_module"
  std::string module_type;  // e.g. "BertLayer", "blocks"
  int64_t count = 0;        // module instances (ranges) that GPU events were attributed to
  int64_t event_count = 0;  // GPU events attributed to them
  int64_t gpu_time_ns = 0;  // summed durations of those events
  stats::Percentiles instance_gpu_time_ns;  // exact, over per-instance summed GPU time
};

struct ModuleTypeStats {
  std::string module_type;
  int64_t modules = 0;  // distinct module names of this type
  int64_t count = 0;    // instances
  int64_t event_count = 0;
  int64_t gpu_time_ns = 0;
  stats::Percentiles instance_gpu_time_ns;
};

struct ModuleSummary {
  int64_t module_range_count = 0;  // ranges in the trace that are module ranges
  std::vector<ModuleStats> modules;            // GPU time, descending; ties by name
  std::vector<ModuleTypeStats> module_types;   // GPU time, descending; ties by type
  int64_t events_with_module = 0;
  int64_t gpu_time_with_module_ns = 0;      // = sum of modules[].gpu_time_ns
  int64_t events_without_module = 0;        // mapped to an operator outside any module
  int64_t gpu_time_without_module_ns = 0;
  int64_t events_unmapped = 0;              // no operator, so no module
  int64_t gpu_time_unmapped_ns = 0;
  // Set when the trace has no module ranges at all; `modules` is then empty.
  std::string unavailable;
};

// The module a range names, or nullopt when its kind and name cannot name one. For NVTX
// ranges this is only the name test: a candidate is a module range only when it also
// encloses another operator range (SummarizeModules checks that).
struct ModuleName {
  std::string name;
  std::string module_type;
};
std::optional<ModuleName> ParseModuleName(RangeKind kind, std::string_view range_name);

// Per range: the module it belongs to — the innermost module range on its (process,
// thread) that wholly encloses it, itself when it is one — or -1; the attribution rule
// above. SummarizeModules and the collector's rollups (rollup.h) both use it, so a
// module's GPU time is the same in `opmap analyze` and `opmap query`.
struct ModuleAttribution {
  std::vector<int32_t> module_of;              // range index → module range index, or -1
  std::vector<std::optional<ModuleName>> names;  // per range; set for module ranges
  int64_t module_range_count = 0;
};
ModuleAttribution AttributeModules(const Trace& trace);
// The same with RangeParents' sweep order of the trace (host_ranges.h) already computed.
ModuleAttribution AttributeModules(const Trace& trace, const std::vector<uint32_t>& order);

// TensorRT layer ranges ("/layer1/layer1.0/conv1/Conv + /layer1/layer1.0/relu/Relu"): the
// module is the first fused part's path without its op — name "layer1/layer1.0/conv1",
// type "layer1.layer1.conv1" (the type rule on the path with '/' as '.'); nullopt for any
// other name.
std::optional<ModuleName> TensorRtLayerModule(std::string_view range_name);

// The module type of a module name (rule above): "BertLayer_3" → "BertLayer"; "" → "".
std::string ModuleTypeOf(std::string_view module_name);

// The summary over a trace given whole or in parts (part_ranges.h): a module instance
// is counted in the part its range ends in, with the GPU time of every part.
class ModuleAccumulator {
 public:
  explicit ModuleAccumulator(stats::ValueBudget* budget = nullptr) : budget_(budget) {}
  void Add(const Trace& part, const MappingResult& mapping, const PartRanges* ranges);
  // The same with the part's AttributeModules already computed.
  void Add(const Trace& part, const MappingResult& mapping, const PartRanges* ranges,
           const ModuleAttribution& attribution);
  ModuleSummary Finish() const;

 private:
  struct Instance {
    ModuleName name;
    bool module = false;  // a module in some part so far (an NVTX range may be one only where
                          // it encloses an operator)
    int64_t gpu_time_ns = 0;
    int64_t events = 0;
  };
  struct Row {
    ModuleStats stats;
    stats::ValueCounts times;
  };
  void Close(Instance instance);

  stats::ValueBudget* budget_;
  ModuleSummary totals_;  // the counts; modules and types come from rows_
  std::vector<Row> rows_;
  absl::flat_hash_map<std::string, size_t> index_;
  absl::flat_hash_map<int64_t, Instance> open_;  // module ranges that go on into a later part
};

ModuleSummary SummarizeModules(const Trace& trace, const MappingResult& mapping);

// Stall rows by the module of the launch they were measured on (StallSample::event →
// its operator range → that range's module), summed like the layer-type rows (value ×
// weight). Fills stalls->modules, or stalls->modules_unavailable with the reason.
void SummarizeModuleStalls(const Trace& trace, const MappingResult& mapping,
                           StallSummary* stalls);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_MODULES_H_
