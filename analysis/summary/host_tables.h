// Host-time tables by operator shape and by module type: what a capture with no GPU
// events (a model served on the CPU, a window before CUPTI started) still says about its
// operators, shapes and modules, where every GPU-time table is empty. From the ranges
// alone: operators are the operator ranges that are not modules, grouped by name and
// Input Dims (shapes from Kineto, emit_nvtx `sizes`, or layerwise `Inputs`,
// import/nvtx_names.h); modules are the ranges modules.h names, by module type. Times are
// the ranges' own durations (inclusive), counts their instances.
#ifndef OPMAP_ANALYSIS_SUMMARY_HOST_TABLES_H_
#define OPMAP_ANALYSIS_SUMMARY_HOST_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/trace.h"

namespace opmap::analysis {

struct HostOperatorShape {
  std::string name;
  std::string input_dims;  // "" when not recorded
  int64_t count = 0;
  int64_t total_ns = 0;
};

struct HostModuleType {
  std::string module_type;
  int64_t modules = 0;  // distinct module names of the type
  int64_t count = 0;    // module calls (ranges)
  int64_t total_ns = 0;
};

struct HostTables {
  std::vector<HostOperatorShape> operators;    // total time, descending
  std::vector<HostModuleType> module_types;    // total time, descending
};

HostTables SummarizeHostTables(const Trace& trace);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_HOST_TABLES_H_
