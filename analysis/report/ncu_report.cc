#include "analysis/report/ncu_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/report/analyze_report.h"
#include "common/text/json_writer.h"
#include "analysis/report/report_fields.h"
#include "common/text/csv.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::Rows;

constexpr char kNcuStallDefinition[] =
    "smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio: memory = "
    "{long_scoreboard, lg_throttle, tex_throttle, drain, membar, imc_miss}, on_chip = "
    "{short_scoreboard, mio_throttle}, each over all reasons except selected";

bool Usable(const StallCoverage& c) { return !c.status.starts_with("unavailable"); }

std::optional<double> Memory(const StallBreakdown& b, const StallCoverage& c) {
  return Usable(c) ? b.MemoryFraction() : std::nullopt;
}
std::optional<double> OnChip(const StallBreakdown& b, const StallCoverage& c) {
  return Usable(c) ? b.OnChipFraction() : std::nullopt;
}

void Optional(text::JsonWriter& w, std::string_view key, std::optional<double> v, int decimals) {
  w.Key(key);
  if (v) {
    w.Double(*v, decimals);
  } else {
    w.Null();
  }
}

void Strings(text::JsonWriter& w, std::string_view key, const std::vector<std::string>& v) {
  w.Key(key).BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
}

void StallFields(text::JsonWriter& w, const StallBreakdown& b, const StallCoverage& c) {
  Optional(w, "memory_stall_fraction", Memory(b, c), 6);
  Optional(w, "on_chip_stall_fraction", OnChip(b, c), 6);
  w.Field("stall_status", c.status);
}

std::optional<double> Us(std::optional<double> ns) {
  if (!ns) return std::nullopt;
  return *ns / 1e3;
}


std::string Frac(std::optional<double> v) {
  return v ? absl::StrFormat("%.3f", *v) : std::string("n/a");
}

// A table cell: the fraction, starred when it rests on a partial reason set.
std::string Frac(std::optional<double> v, const StallCoverage& c) {
  return Frac(v) + (v && c.status.starts_with("partial") ? "*" : "");
}

}  // namespace

std::string RenderNcuJson(const NcuSummary& s, const NcuReportOptions& o) {
  text::JsonWriter w;
  w.BeginObject().Key("ncu").BeginObject();
  w.Field("file", o.file).Field("format", s.format);
  Strings(w, "notes", s.notes);
  w.Field("definition", kNcuStallDefinition).Field("weighting", s.weighting);
  w.Key("stalls").BeginObject();
  w.Field("status", s.stalls.status);
  Strings(w, "reasons_present", s.stalls.present);
  Strings(w, "reasons_missing", s.stalls.missing);
  Strings(w, "reasons_unrecognized", s.stalls.unrecognized);
  w.EndObject();
  if (o.join) {
    w.Key("join").BeginObject();
    w.Field("trace", o.joined_trace).Field("ncu_kernels", o.join->ncu_kernels);
    w.Field("joined", o.join->joined).Field("ncu_unjoined", o.join->ncu_unjoined);
    w.Field("trace_kernels_unprofiled", o.join->trace_kernels_unprofiled);
    w.EndObject();
  }
  w.Key("layer_types").BeginArray();
  for (const NcuGroupRow& g : s.layer_types) {
    w.BeginObject();
    w.Field("layer_type", LayerTypeName(g.layer_type)).Field("kernels", g.kernels);
    w.Field("kernels_with_stalls", g.kernels_with_stalls);
    w.Field("duration_us", g.duration_ns / 1e3, 3);
    StallFields(w, g.breakdown, g.stalls);
    w.EndObject();
  }
  w.EndArray();
  w.Key("kernel_names").BeginArray();
  for (size_t i = 0; i < Rows(s.kernel_names.size(), o.top); ++i) {
    const NcuGroupRow& g = s.kernel_names[i];
    w.BeginObject();
    w.Field("name", g.name).Field("layer_type", LayerTypeName(g.layer_type));
    w.Field("kernels", g.kernels).Field("kernels_with_stalls", g.kernels_with_stalls);
    w.Field("duration_us", g.duration_ns / 1e3, 3);
    StallFields(w, g.breakdown, g.stalls);
    w.EndObject();
  }
  w.EndArray();
  w.Key("kernels").BeginArray();
  for (size_t i = 0; i < Rows(s.kernels.size(), o.top); ++i) {
    const NcuKernelRow& k = s.kernels[i];
    w.BeginObject();
    w.Field("id", k.id).Field("name", k.name).Field("layer_type", LayerTypeName(k.layer_type));
    w.Field("device", static_cast<int64_t>(k.device)).Field("stream", k.stream);
    Optional(w, "duration_us", Us(k.duration_ns), 3);
    w.Field("duration_source", k.duration_source);
    StallFields(w, k.breakdown, k.stalls);
    Strings(w, "reasons_present", k.stalls.present);
    Strings(w, "reasons_missing", k.stalls.missing);
    Strings(w, "reasons_unrecognized", k.stalls.unrecognized);
    Optional(w, "dram_bytes", k.dram_bytes, 0);
    Optional(w, "flops", k.flops, 0);
    Optional(w, "arithmetic_intensity", k.arithmetic_intensity, 4);
    w.Key("throughput_pct").BeginObject();
    for (const auto& [metric, v] : k.throughput_pct) w.Field(metric, v, 2);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject().EndObject();
  return w.Take();
}

std::string RenderNcuTable(const NcuSummary& s, const NcuReportOptions& o) {
  std::string out = absl::StrFormat("Nsight Compute export %s (%s): %d kernels\n", o.file,
                                    s.format, s.kernels.size());
  for (const std::string& n : s.notes) absl::StrAppend(&out, "  note: ", n, "\n");
  if (o.join) {
    absl::StrAppendFormat(&out,
                          "  joined to %s by kernel name and launch order: %d of %d joined, "
                          "%d unjoined; %d trace kernel launches not profiled\n",
                          o.joined_trace, o.join->joined, o.join->ncu_kernels,
                          o.join->ncu_unjoined, o.join->trace_kernels_unprofiled);
  }
  absl::StrAppendFormat(&out, "  memory stalls (%s; weighted by %s)\n  stall reasons: %s\n",
                        kNcuStallDefinition, s.weighting, s.stalls.status);
  if (s.stalls.status.starts_with("partial")) {
    absl::StrAppend(&out, "  (* = over the reasons present only)\n");
  }
  if (!s.stalls.present.empty()) {
    absl::StrAppend(&out, "  reasons present: ", absl::StrJoin(s.stalls.present, ", "), "\n");
  }
  if (!s.stalls.unrecognized.empty()) {
    absl::StrAppend(&out, "  not Nsight Compute reasons (counted as other): ",
                    absl::StrJoin(s.stalls.unrecognized, ", "), "\n");
  }
  absl::StrAppendFormat(&out, "\n%-14s %8s %14s %8s %8s\n", "layer_type", "kernels",
                        "duration_us", "memory", "on_chip");
  for (const NcuGroupRow& g : s.layer_types) {
    absl::StrAppendFormat(&out, "%-14s %8d %14.3f %8s %8s\n", LayerTypeName(g.layer_type),
                          g.kernels, g.duration_ns / 1e3, Frac(Memory(g.breakdown, g.stalls), g.stalls),
                          Frac(OnChip(g.breakdown, g.stalls), g.stalls));
  }
  absl::StrAppendFormat(&out, "\n%6s %-50s %-12s %12s %8s %8s %14s %12s %8s\n", "id", "kernel",
                        "layer_type", "duration_us", "memory", "on_chip", "dram_bytes", "flops",
                        "flop/B");
  for (size_t i = 0; i < Rows(s.kernels.size(), o.top); ++i) {
    const NcuKernelRow& k = s.kernels[i];
    absl::StrAppendFormat(
        &out, "%6d %-50s %-12s %12s %8s %8s %14s %12s %8s\n", k.id, text::PrintableCell(k.name, 50),
        LayerTypeName(k.layer_type),
        k.duration_ns ? absl::StrFormat("%.3f", *k.duration_ns / 1e3) : "n/a",
        Frac(Memory(k.breakdown, k.stalls), k.stalls), Frac(OnChip(k.breakdown, k.stalls), k.stalls),
        k.dram_bytes ? absl::StrFormat("%.0f", *k.dram_bytes) : "n/a",
        k.flops ? absl::StrFormat("%.0f", *k.flops) : "n/a",
        k.arithmetic_intensity ? absl::StrFormat("%.3f", *k.arithmetic_intensity) : "n/a");
  }
  if (o.top > 0 && s.kernels.size() > static_cast<size_t>(o.top)) {
    absl::StrAppendFormat(&out, "  ... %d more kernels (--top 0 for all)\n",
                          s.kernels.size() - o.top);
  }
  return out;
}

std::string RenderNcuCsv(const NcuSummary& s, const NcuReportOptions& o, bool with_header) {
  std::string out;
  if (with_header) {
    out =
        "file,section,id,name,layer_type,kernels,duration_us,memory_stall_fraction,"
        "on_chip_stall_fraction,stall_status,dram_bytes,flops,arithmetic_intensity\n";
  }
  std::string file;
  text::AppendCsvField(o.file, &file);
  auto frac = [](std::optional<double> v) {
    return v ? absl::StrFormat("%.6f", *v) : std::string();
  };
  auto field = [](std::string_view v) {
    std::string f;
    text::AppendCsvField(v, &f);
    return f;
  };
  for (const NcuGroupRow& g : s.layer_types) {
    absl::StrAppendFormat(&out, "%s,ncu_layer_type,,,%s,%d,%.3f,%s,%s,%s,,,\n", file,
                          LayerTypeName(g.layer_type), g.kernels, g.duration_ns / 1e3,
                          frac(Memory(g.breakdown, g.stalls)), frac(OnChip(g.breakdown, g.stalls)),
                          field(g.stalls.status));
  }
  for (size_t i = 0; i < Rows(s.kernel_names.size(), o.top); ++i) {
    const NcuGroupRow& g = s.kernel_names[i];
    absl::StrAppendFormat(&out, "%s,ncu_kernel_name,,%s,%s,%d,%.3f,%s,%s,%s,,,\n", file,
                          field(g.name), LayerTypeName(g.layer_type), g.kernels,
                          g.duration_ns / 1e3, frac(Memory(g.breakdown, g.stalls)),
                          frac(OnChip(g.breakdown, g.stalls)), field(g.stalls.status));
  }
  for (size_t i = 0; i < Rows(s.kernels.size(), o.top); ++i) {
    const NcuKernelRow& k = s.kernels[i];
    absl::StrAppendFormat(
        &out, "%s,ncu_kernel,%d,%s,%s,1,%s,%s,%s,%s,%s,%s,%s\n", file, k.id, field(k.name),
        LayerTypeName(k.layer_type),
        k.duration_ns ? absl::StrFormat("%.3f", *k.duration_ns / 1e3) : "",
        frac(Memory(k.breakdown, k.stalls)), frac(OnChip(k.breakdown, k.stalls)),
        field(k.stalls.status), k.dram_bytes ? absl::StrFormat("%.0f", *k.dram_bytes) : "",
        k.flops ? absl::StrFormat("%.0f", *k.flops) : "",
        k.arithmetic_intensity ? absl::StrFormat("%.6f", *k.arithmetic_intensity) : "");
  }
  return out;
}

}  // namespace opmap::analysis
