#include "analysis/report/stalls_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/report/analyze_report.h"

#include "analysis/report/report_fields.h"
#include "common/text/csv.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::Rows;

constexpr char kStallDefinition[] =
    "memory = {long_scoreboard, lg_throttle, tex_throttle, drain, membar, imc_miss}, "
    "on_chip = {short_scoreboard, mio_throttle}, each over all reasons except selected";

void FractionField(text::JsonWriter& w, std::string_view key, std::optional<double> v) {
  w.Key(key);
  if (v) {
    w.Double(*v, 6);
  } else {
    w.Null();
  }
}

void BreakdownFields(text::JsonWriter& w, const StallBreakdown& b) {
  FractionField(w, "memory_stall_fraction", b.MemoryFraction());
  FractionField(w, "on_chip_stall_fraction", b.OnChipFraction());
  w.Field("stalled", b.stalled(), 3).Field("selected", b.selected, 3);
}

std::string Fraction(std::optional<double> v) {
  return v ? absl::StrFormat("%.3f", *v) : std::string("n/a");
}

}  // namespace

void StallsJson(text::JsonWriter& w, const StallSummary& s, int top) {
  w.Key("stalls").BeginObject();
  if (!s.unavailable.empty()) {
    w.Field("unavailable", s.unavailable);
    w.EndObject();
    return;
  }
  w.Field("unit", StallUnitName(s.unit));
  w.Field("definition", kStallDefinition);
  w.Key("reasons_present").BeginArray();
  for (const std::string& r : s.reasons_present) w.String(r);
  w.EndArray();
  w.Field("rows_other_unit", s.rows_other_unit);
  w.Key("layer_types").BeginArray();
  for (const LayerTypeStallStats& l : s.layer_types) {
    w.BeginObject();
    w.Field("layer_type", LayerTypeName(l.layer_type)).Field("kernels", l.kernels);
    BreakdownFields(w, l.breakdown);
    w.EndObject();
  }
  w.EndArray();
  w.Key("modules").BeginArray();
  for (const ModuleStallStats& m : s.modules) {
    w.BeginObject();
    w.Field("module", m.module).Field("module_type", m.module_type).Field("rows", m.rows);
    BreakdownFields(w, m.breakdown);
    w.EndObject();
  }
  w.EndArray();
  if (!s.modules_unavailable.empty()) w.Field("modules_unavailable", s.modules_unavailable);
  w.Key("kernels").BeginArray();
  for (size_t i = 0; i < Rows(s.kernels.size(), top); ++i) {
    const KernelStallStats& k = s.kernels[i];
    w.BeginObject();
    w.Field("name", k.name).Field("layer_type", LayerTypeName(k.layer_type));
    w.Key("layer_type_inferred").Bool(k.layer_type_inferred);
    BreakdownFields(w, k.breakdown);
    w.Key("reasons").BeginObject();
    for (const auto& [reason, value] : k.reasons) w.Field(reason, value, 3);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string StallsTable(const StallSummary& s, int top) {
  if (!s.unavailable.empty()) return "\nmemory stalls: unavailable: " + s.unavailable + "\n";
  std::string out =
      absl::StrFormat("\nmemory stalls (%s; %s)\n  reasons present: %s\n", StallUnitName(s.unit),
                      kStallDefinition, absl::StrJoin(s.reasons_present, ", "));
  absl::StrAppendFormat(&out, "%-14s %8s %8s %8s %14s\n", "layer_type", "memory", "on_chip",
                        "kernels", "stalled");
  for (const LayerTypeStallStats& l : s.layer_types) {
    absl::StrAppendFormat(&out, "%-14s %8s %8s %8d %14.1f\n", LayerTypeName(l.layer_type),
                          Fraction(l.breakdown.MemoryFraction()),
                          Fraction(l.breakdown.OnChipFraction()), l.kernels, l.breakdown.stalled());
  }
  if (!s.modules.empty()) {
    absl::StrAppendFormat(&out, "%-40s %8s %8s %14s\n", "module", "memory", "on_chip", "stalled");
    for (const ModuleStallStats& m : s.modules) {
      absl::StrAppendFormat(&out, "%-40s %8s %8s %14.1f\n",
                            m.module.empty() ? "(no module)" : text::PrintableCell(m.module, 40),
                            Fraction(m.breakdown.MemoryFraction()),
                            Fraction(m.breakdown.OnChipFraction()), m.breakdown.stalled());
    }
  } else if (!s.modules_unavailable.empty()) {
    absl::StrAppendFormat(&out, "by module: unavailable: %s\n", s.modules_unavailable);
  }
  absl::StrAppendFormat(&out, "%-60s %-12s %8s %8s %14s\n", "kernel", "layer_type", "memory",
                        "on_chip", "stalled");
  for (size_t i = 0; i < Rows(s.kernels.size(), top); ++i) {
    const KernelStallStats& k = s.kernels[i];
    const std::string name = text::PrintableCell(k.name, 60);
    absl::StrAppendFormat(&out, "%-60s %-12s %8s %8s %14.1f\n", name,
                          std::string(LayerTypeName(k.layer_type)) + (k.layer_type_inferred ? "*" : ""),
                          Fraction(k.breakdown.MemoryFraction()),
                          Fraction(k.breakdown.OnChipFraction()), k.breakdown.stalled());
  }
  return out;
}

std::string StallsCsv(const StallSummary& s, const std::string& file_field, int top) {
  std::string out;
  if (!s.unavailable.empty()) return out;
  auto share = [](std::optional<double> v) {
    return v ? absl::StrFormat("%.6f", *v) : std::string();
  };
  for (const LayerTypeStallStats& l : s.layer_types) {
    absl::StrAppendFormat(&out, "%s,stall_layer_type,%s,%s,%d,,%s,,,,,,,,\n", file_field,
                          LayerTypeName(l.layer_type), LayerTypeName(l.layer_type), l.kernels,
                          share(l.breakdown.MemoryFraction()));
  }
  for (size_t i = 0; i < Rows(s.kernels.size(), top); ++i) {
    const KernelStallStats& k = s.kernels[i];
    std::string name;
    text::AppendCsvField(k.name, &name);
    absl::StrAppendFormat(&out, "%s,stall_kernel,%s,%s,1,,%s,,,,,,,,\n", file_field, name,
                          LayerTypeName(k.layer_type), share(k.breakdown.MemoryFraction()));
  }
  return out;
}

void LaunchesJson(text::JsonWriter& w, const std::vector<LaunchRow>& launches) {
  static constexpr const char* kKinds[] = {"kernel", "memcpy", "memset"};
  w.Key("launches").BeginArray();
  for (const LaunchRow& r : launches) {
    w.BeginObject();
    w.Field("name", r.name).Field("kind", kKinds[static_cast<int>(r.kind)]);
    w.Field("device", static_cast<int64_t>(r.device)).Field("stream", r.stream);
    w.Field("start_ns", r.start_ns).Field("end_ns", r.end_ns);
    w.Key("grid").BeginArray();
    for (int32_t v : r.grid) w.Int(v);
    w.EndArray();
    w.Key("block").BeginArray();
    for (int32_t v : r.block) w.Int(v);
    w.EndArray();
    w.Field("correlation", r.correlation).Field("external_id", r.external_id);
    w.Field("graph_id", r.graph_id);
    w.Field("operator", r.op).Field("layer_type", LayerTypeName(r.layer_type));
    w.Field("rule", MappingRuleName(r.rule));
    if (r.rule == MappingRule::kUnmapped) {
      w.Field("unmapped_reason", UnmappedReasonName(r.reason));
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace opmap::analysis
