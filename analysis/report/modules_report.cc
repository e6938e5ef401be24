#include "analysis/report/modules_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "analysis/report/analyze_report.h"

#include "analysis/report/report_fields.h"
#include "common/text/csv.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::PercentileFields;
using report_fields::Rows;
using report_fields::Us;

double Share(int64_t part, int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0;
}

}  // namespace

void ModulesJson(text::JsonWriter& w, const ModuleSummary& s, int top) {
  w.Key("modules").BeginArray();
  for (size_t i = 0; i < Rows(s.modules.size(), top); ++i) {
    const ModuleStats& m = s.modules[i];
    w.BeginObject();
    w.Field("name", m.name).Field("module_type", m.module_type);
    w.Field("count", m.count).Field("event_count", m.event_count);
    w.Field("gpu_time_us", Us(m.gpu_time_ns));
    PercentileFields(w, m.instance_gpu_time_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("module_types").BeginArray();
  for (const ModuleTypeStats& t : s.module_types) {
    w.BeginObject();
    w.Field("module_type", t.module_type).Field("modules", t.modules);
    w.Field("count", t.count).Field("event_count", t.event_count);
    w.Field("gpu_time_us", Us(t.gpu_time_ns));
    PercentileFields(w, t.instance_gpu_time_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("module_attribution").BeginObject();
  w.Field("module_ranges", s.module_range_count);
  w.Field("events_with_module", s.events_with_module);
  w.Field("gpu_time_with_module_us", Us(s.gpu_time_with_module_ns));
  w.Field("events_without_module", s.events_without_module);
  w.Field("gpu_time_without_module_us", Us(s.gpu_time_without_module_ns));
  w.Field("events_unmapped", s.events_unmapped);
  w.Field("gpu_time_unmapped_us", Us(s.gpu_time_unmapped_ns));
  w.EndObject();
  if (!s.unavailable.empty()) w.Field("modules_unavailable", s.unavailable);
}

std::string ModulesTable(const ModuleSummary& s, int top) {
  std::string out;
  if (!s.unavailable.empty()) {
    absl::StrAppendFormat(&out, "\nmodules: unavailable: %s\n", s.unavailable);
    return out;
  }
  absl::StrAppendFormat(&out,
                        "\nmodules: %d module ranges; GPU time %.3f us in modules (%d events), "
                        "%.3f us outside any module (%d events), %.3f us unmapped (%d events)\n",
                        s.module_range_count, Us(s.gpu_time_with_module_ns),
                        s.events_with_module, Us(s.gpu_time_without_module_ns),
                        s.events_without_module, Us(s.gpu_time_unmapped_ns), s.events_unmapped);
  absl::StrAppendFormat(&out, "%-32s %8s %7s %13s %10s %10s %10s\n", "module_type", "modules",
                        "count", "gpu_time_us", "p50_us", "p95_us", "p99_us");
  for (const ModuleTypeStats& t : s.module_types) {
    absl::StrAppendFormat(&out, "%-32s %8d %7d %13.3f %10.3f %10.3f %10.3f\n",
                          text::PrintableCell(t.module_type, 32), t.modules, t.count, Us(t.gpu_time_ns),
                          Us(t.instance_gpu_time_ns.p50), Us(t.instance_gpu_time_ns.p95),
                          Us(t.instance_gpu_time_ns.p99));
  }
  const size_t n = Rows(s.modules.size(), top);
  absl::StrAppendFormat(&out, "\nmodules (%d of %d, by GPU time)\n", n, s.modules.size());
  absl::StrAppendFormat(&out, "%-40s %-24s %7s %13s %10s %10s %10s\n", "name", "module_type",
                        "count", "gpu_time_us", "p50_us", "p95_us", "p99_us");
  for (size_t i = 0; i < n; ++i) {
    const ModuleStats& m = s.modules[i];
    absl::StrAppendFormat(&out, "%-40s %-24s %7d %13.3f %10.3f %10.3f %10.3f\n",
                          text::PrintableCell(m.name, 40), text::PrintableCell(m.module_type, 24), m.count,
                          Us(m.gpu_time_ns), Us(m.instance_gpu_time_ns.p50),
                          Us(m.instance_gpu_time_ns.p95), Us(m.instance_gpu_time_ns.p99));
  }
  return out;
}

std::string ModulesCsv(const ModuleSummary& s, int64_t total_gpu_time_ns,
                       const std::string& file_field, int top) {
  std::string out;
  for (const ModuleTypeStats& t : s.module_types) {
    std::string type;
    text::AppendCsvField(t.module_type, &type);
    absl::StrAppendFormat(&out, "%s,module_type,%s,%s,%d,%.3f,%.6f,%.3f,%.3f,%.3f,,,,,\n",
                          file_field, type, type, t.count, Us(t.gpu_time_ns),
                          Share(t.gpu_time_ns, total_gpu_time_ns), Us(t.instance_gpu_time_ns.p50),
                          Us(t.instance_gpu_time_ns.p95), Us(t.instance_gpu_time_ns.p99));
  }
  for (size_t i = 0; i < Rows(s.modules.size(), top); ++i) {
    const ModuleStats& m = s.modules[i];
    std::string name;
    std::string type;
    text::AppendCsvField(m.name, &name);
    text::AppendCsvField(m.module_type, &type);
    absl::StrAppendFormat(&out, "%s,module,%s,%s,%d,%.3f,%.6f,%.3f,%.3f,%.3f,,,,,\n",
                          file_field, name, type, m.count, Us(m.gpu_time_ns),
                          Share(m.gpu_time_ns, total_gpu_time_ns), Us(m.instance_gpu_time_ns.p50),
                          Us(m.instance_gpu_time_ns.p95), Us(m.instance_gpu_time_ns.p99));
  }
  return out;
}

}  // namespace opmap::analysis
