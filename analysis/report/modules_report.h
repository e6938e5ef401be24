// Rendering of the module summary (analysis/summary/modules.h) for `opmap analyze`'s JSON,
// table and CSV output. With no module ranges in the source the JSON says so
// ("modules": [] and "modules_unavailable") instead of printing zero-filled rows.
#ifndef OPMAP_ANALYSIS_REPORT_MODULES_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_MODULES_REPORT_H_

#include <cstdint>
#include <string>

#include "common/text/json_writer.h"
#include "analysis/summary/modules.h"

namespace opmap::analysis {

// Adds "modules", "module_types", "module_attribution" and, when unavailable,
// "modules_unavailable" to the open object; `top` rows of modules (0 = all).
void ModulesJson(text::JsonWriter& w, const ModuleSummary& s, int top);
std::string ModulesTable(const ModuleSummary& s, int top);
// CSV rows in analyze's long format: sections module_type and module (the layer_type
// column holds the module type; share is of `total_gpu_time_ns`).
std::string ModulesCsv(const ModuleSummary& s, int64_t total_gpu_time_ns,
                       const std::string& file_field, int top);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_MODULES_REPORT_H_
