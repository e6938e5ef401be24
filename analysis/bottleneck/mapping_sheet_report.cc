// JSON and display forms of the mapping sheet. Missing figures print as
// "unavailable: <reason>" (JSON: null plus a reason field), never as 0.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/bottleneck/evidence_format.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/report/report_fields.h"
#include "common/text/printable.h"
#include "common/text/units.h"

namespace opmap::analysis {
namespace {

using bottleneck_format::Number;
using bottleneck_format::OptionalDouble;
using report_fields::Us;

constexpr size_t kNameWidth = 60;

std::string Dim3(const std::array<int32_t, 3>& d) {
  if (d[0] <= 0) return "unavailable: not recorded";
  return absl::StrCat(d[0], "x", d[1], "x", d[2]);
}

void WriteDim3(text::JsonWriter& w, std::string_view key, const std::array<int32_t, 3>& d) {
  w.Key(key);
  if (d[0] <= 0) {
    w.Null();
    return;
  }
  w.BeginArray().Int(d[0]).Int(d[1]).Int(d[2]).EndArray();
}

std::string Percent(double share) { return absl::StrFormat("%.1f", 100.0 * share); }
std::string UsText(int64_t ns) { return text::Micros(static_cast<double>(ns)); }

// Why an operator has no intensity: the reason its classification recorded.
std::string IntensityMissing(const SheetOperator& op) {
  for (const Evidence& e : op.observed.evidence) {
    if (e.figure == "arithmetic intensity" && !e.missing.empty()) return e.missing;
  }
  return op.flops ? "no DRAM byte count" : op.flops_formula;
}

std::string IntensityText(const SheetOperator& op) {
  if (op.intensity) return Number(*op.intensity);
  return absl::StrCat("unavailable: ", IntensityMissing(op));
}

void WriteGroupJson(const SheetGroup& g, text::JsonWriter& w) {
  w.BeginObject();
  w.Field("operator", g.op).Field("layer_type", LayerTypeName(g.layer_type));
  w.Field("input_dims", g.input_dims).Field("input_type", g.input_type);
  w.Field("concrete_inputs", g.concrete_inputs);
  w.Field("instances", g.instances).Field("gpu_time_ns", g.gpu_time_ns);
  w.Field("share", g.share, 6);
  w.Field("family", g.cost.family).Field("path", g.figures.vector_path ? "vector" : "tensor-core");
  w.Field("precision", PrecisionName(g.figures.precision));
  w.Field("precision_source", g.precision_source);
  OptionalDouble(w, "flops", g.cost.flops, 0);
  OptionalDouble(w, "model_flops", g.cost.model_flops, 0);
  w.Field("flops_source", g.cost.flops_source).Field("flops_formula", g.cost.formula);
  OptionalDouble(w, "bytes", g.cost.bytes, 0);
  w.Field("bytes_source", g.cost.bytes_source).Field("bytes_formula", g.cost.bytes_formula);
  if (!g.cost.missing.empty()) w.Field("unavailable", g.cost.missing);
  OptionalDouble(w, "intensity_flop_per_byte", g.observed.intensity, 6);
  OptionalDouble(w, "ridge_flop_per_byte", g.observed.ridge, 3);
  OptionalDouble(w, "achieved_tflop_per_s",
                 g.achieved_flops_per_s ? std::optional<double>(*g.achieved_flops_per_s * 1e-12)
                                        : std::nullopt,
                 6);
  OptionalDouble(w, "achieved_tb_per_s",
                 g.achieved_bytes_per_s ? std::optional<double>(*g.achieved_bytes_per_s * 1e-12)
                                        : std::nullopt,
                 6);
  OptionalDouble(w, "u_compute", g.observed.u_compute, 6);
  OptionalDouble(w, "u_memory", g.observed.u_memory, 6);
  w.Field("expected", BottleneckClassName(g.expected)).Field("expected_basis", g.expected_basis);
  w.Key("observed");
  bottleneck_format::WriteClassificationJson(g.observed, w);
  w.Key("kernels").BeginArray();
  for (const SheetKernel& k : g.kernels) {
    w.BeginObject().Field("name", k.name).Field("count", k.count);
    w.Field("gpu_time_ns", k.gpu_time_ns).EndObject();
  }
  w.EndArray();
  w.EndObject();
}

double Share(int64_t part, int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0;
}

}  // namespace

void WriteMappingSheetJson(const MappingSheet& sheet, text::JsonWriter& w) {
  w.BeginObject();
  w.Field("gpu_time_ns", sheet.gpu_time_ns);
  w.Key("coverage").BeginObject();
  w.Field("mapped_gpu_time_ns", sheet.mapped_ns);
  w.Field("unmapped_gpu_time_ns", sheet.gpu_time_ns - sheet.mapped_ns);
  w.Field("costed_gpu_time_ns", sheet.costed_ns);
  w.Field("costed_share", Share(sheet.costed_ns, sheet.mapped_ns), 6);
  w.Field("classified_gpu_time_ns", sheet.classified_ns);
  w.Field("classified_share", Share(sheet.classified_ns, sheet.mapped_ns), 6);
  w.EndObject();
  w.Key("groups").BeginArray();
  for (const SheetGroup& g : sheet.groups) WriteGroupJson(g, w);
  w.EndArray();
  w.Key("operators").BeginArray();
  for (const SheetOperator& op : sheet.operators) {
    w.BeginObject();
    w.Field("name", op.name).Field("layer_type", LayerTypeName(op.layer_type));
    w.Field("instances", op.instances).Field("gpu_time_ns", op.gpu_time_ns);
    w.Field("share", op.share, 6);
    OptionalDouble(w, "flops", op.flops, 0);
    if (op.flops) {
      w.Field("flops_formula", op.flops_formula);
    } else {
      w.Field("flops_unavailable", op.flops_formula);
    }
    OptionalDouble(w, "bytes", op.figures.bytes, 0);
    if (op.figures.bytes) w.Field("bytes_source", op.bytes_basis);
    OptionalDouble(w, "intensity_flop_per_byte", op.intensity, 3);
    if (!op.intensity) w.Field("intensity_unavailable", IntensityMissing(op));
    w.Field("expected", BottleneckClassName(op.expected));
    w.Key("groups").BeginArray();
    for (int32_t gi : op.groups) w.Int(gi);
    w.EndArray();
    w.Key("class_gpu_time_ns").BeginObject();
    for (int c = 0; c < 7; ++c) {
      if (op.class_time_ns[c] > 0) {
        w.Field(BottleneckClassName(static_cast<BottleneckClass>(c)), op.class_time_ns[c]);
      }
    }
    w.EndObject();
    w.Key("observed");
    bottleneck_format::WriteClassificationJson(op.observed, w);
    w.Key("kernels").BeginArray();
    for (const SheetKernel& k : op.kernels) {
      w.BeginObject();
      w.Field("name", k.name).Field("count", k.count).Field("gpu_time_ns", k.gpu_time_ns);
      w.Field("share", k.share, 6);
      WriteDim3(w, "grid", k.grid);
      WriteDim3(w, "block", k.block);
      w.Key("registers_per_thread");
      if (k.registers_per_thread >= 0) {
        w.Int(k.registers_per_thread);
      } else {
        w.Null();
      }
      w.Key("shared_memory_bytes");
      if (k.shared_memory_bytes != kNone) {
        w.Int(k.shared_memory_bytes);
      } else {
        w.Null();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("fusion_candidates").BeginArray();
  for (const FusionCandidate& c : sheet.fusion) {
    w.BeginObject();
    w.Field("stream", c.stream).Field("occurrences", c.occurrences);
    w.Field("gpu_time_ns", c.gpu_time_ns).Field("saving_bound_ns", c.saving_bound_ns);
    w.Field("before", c.before).Field("after", c.after);
    w.Key("kernels").BeginArray();
    for (const std::string& k : c.kernels) w.String(k);
    w.EndArray();
    w.Key("operators").BeginArray();
    for (const std::string& o : c.operators) w.String(o);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes").BeginArray();
  for (const std::string& n : sheet.notes) w.String(n);
  w.EndArray();
  w.EndObject();
}

namespace {

// The per-shape roofline rows (operator, input dims, dtypes, concrete inputs).
DocTable GroupsTable(const MappingSheet& sheet, int top) {
  DocTable t;
  t.title = "Roofline groups (operator × shape)";
  t.columns = {"operator", "input dims", "instances", "GPU µs", "share %", "GFLOP",
               "MB", "bytes from", "FLOP/B", "TFLOP/s", "TB/s", "U_c", "U_m", "expected",
               "observed"};
  t.align_right = {false, false, true, true, true, true, true, false, true, true, true, true,
                   true, false, false};
  const size_t rows = report_fields::Rows(sheet.groups.size(), top);
  auto opt = [](const std::optional<double>& v, double scale, const std::string& why) {
    return v ? Number(*v * scale) : absl::StrCat("unavailable: ", why);
  };
  for (size_t i = 0; i < rows; ++i) {
    const SheetGroup& g = sheet.groups[i];
    const std::string why = g.cost.missing.empty() ? "not derivable" : g.cost.missing;
    t.rows.push_back({text::PrintableCell(g.op, 40), text::PrintableCell(g.input_dims, 48), absl::StrCat(g.instances),
                      UsText(g.gpu_time_ns), Percent(g.share), opt(g.cost.flops, 1e-9, why),
                      opt(g.cost.bytes, 1e-6, why), g.cost.bytes_source.empty() ? "-" : g.cost.bytes_source,
                      opt(g.observed.intensity, 1, why), opt(g.achieved_flops_per_s, 1e-12, why),
                      opt(g.achieved_bytes_per_s, 1e-12, why),
                      opt(g.observed.u_compute, 1, why), opt(g.observed.u_memory, 1, why),
                      std::string(BottleneckClassName(g.expected)),
                      std::string(BottleneckClassName(g.observed.cls))});
  }
  t.notes.push_back(absl::StrFormat(
      "groups with FLOPs and bytes hold %s%% of the GPU time mapped to operators; classified "
      "groups %s%%",
      Percent(Share(sheet.costed_ns, sheet.mapped_ns)),
      Percent(Share(sheet.classified_ns, sheet.mapped_ns))));
  if (rows < sheet.groups.size()) {
    t.notes.push_back(absl::StrCat("top ", rows, " of ", sheet.groups.size(), " groups by GPU time"));
  }
  return t;
}

}  // namespace

DocSection MappingSheetSection(const MappingSheet& sheet, int top_operators) {
  DocSection s;
  s.heading = "Operator-to-kernel mapping sheet";
  s.facts.emplace_back("GPU time", absl::StrCat(UsText(sheet.gpu_time_ns), " µs (summed)"));
  s.facts.emplace_back("roofline coverage",
                       absl::StrFormat("FLOPs and bytes for %s%% of the GPU time mapped to "
                                       "operators, classified %s%% (%s%% of GPU time unmapped)",
                                       Percent(Share(sheet.costed_ns, sheet.mapped_ns)),
                                       Percent(Share(sheet.classified_ns, sheet.mapped_ns)),
                                       Percent(Share(sheet.gpu_time_ns - sheet.mapped_ns,
                                                     sheet.gpu_time_ns))));
  s.facts.emplace_back("operators", absl::StrCat(sheet.operators.size()));
  const size_t rows = report_fields::Rows(sheet.operators.size(), top_operators);

  DocTable ops;
  ops.title = "Operators";
  ops.columns = {"operator", "layer type", "instances", "GPU µs", "share %", "FLOPs",
                 "FLOP/B", "expected", "observed", "deciding rule"};
  ops.align_right = {false, false, true, true, true, true, true, false, false, false};
  DocTable kernels;
  kernels.title = "Kernels per operator";
  kernels.columns = {"operator", "kernel", "count", "grid", "block", "regs", "smem B",
                     "GPU µs", "share %"};
  kernels.align_right = {false, false, true, false, false, true, true, true, true};
  DocTable evidence;
  evidence.title = "Evidence";
  evidence.columns = {"operator", "figure", "value", "rule", "met"};
  evidence.align_right = {false, false, true, false, false};
  for (size_t i = 0; i < rows; ++i) {
    const SheetOperator& op = sheet.operators[i];
    const std::string name = text::PrintableCell(op.name, kNameWidth);
    ops.rows.push_back({name, std::string(LayerTypeName(op.layer_type)),
                        absl::StrCat(op.instances), UsText(op.gpu_time_ns), Percent(op.share),
                        op.flops ? Number(*op.flops) : absl::StrCat("unavailable: ", op.flops_formula),
                        IntensityText(op), std::string(BottleneckClassName(op.expected)),
                        std::string(BottleneckClassName(op.observed.cls)), op.observed.summary});
    for (const SheetKernel& k : op.kernels) {
      kernels.rows.push_back(
          {name, text::PrintableCell(k.name, kNameWidth), absl::StrCat(k.count), Dim3(k.grid), Dim3(k.block),
           k.registers_per_thread >= 0 ? absl::StrCat(k.registers_per_thread)
                                       : "unavailable: not recorded",
           k.shared_memory_bytes != kNone ? absl::StrCat(k.shared_memory_bytes)
                                          : "unavailable: not recorded",
           UsText(k.gpu_time_ns), Percent(k.share)});
    }
    for (const Evidence& e : op.observed.evidence) {
      evidence.rows.push_back({name, e.figure, bottleneck_format::EvidenceValue(e), e.rule,
                               !e.missing.empty() ? "undecided" : (e.met ? "yes" : "no")});
    }
  }
  if (rows < sheet.operators.size()) {
    ops.notes.push_back(absl::StrCat("top ", rows, " of ", sheet.operators.size(),
                                     " operators by GPU time"));
  }
  s.tables.push_back(std::move(ops));
  s.tables.push_back(GroupsTable(sheet, top_operators));
  s.tables.push_back(std::move(kernels));
  s.tables.push_back(std::move(evidence));

  DocTable fusion;
  fusion.title = "Fusion candidates";
  fusion.columns = {"stream", "kernels", "operators", "occurrences", "GPU µs", "saving bound µs",
                    "before", "after"};
  fusion.align_right = {true, false, false, true, true, true, false, false};
  for (const FusionCandidate& c : sheet.fusion) {
    std::vector<std::string> short_kernels;
    for (const std::string& k : c.kernels) short_kernels.push_back(text::PrintableCell(k, 40));
    fusion.rows.push_back({absl::StrCat(c.stream), absl::StrJoin(short_kernels, " → "),
                           absl::StrJoin(c.operators, " → "), absl::StrCat(c.occurrences),
                           UsText(c.gpu_time_ns), UsText(c.saving_bound_ns),
                           text::PrintableCell(c.before, 40), text::PrintableCell(c.after, 40)});
  }
  fusion.notes.push_back(
      "saving bound per occurrence = (L − 1) × mean kernel time of the run's L kernels "
      "(Σ durations − Σ durations ÷ L): the fused kernel is assumed to take at least the mean; "
      "gaps inside the run belong to the host-wait / launch-overhead bounds");
  if (sheet.fusion.empty()) fusion.notes.push_back("no runs of small elementwise/norm/softmax "
                                                   "kernels found");
  s.tables.push_back(std::move(fusion));
  for (const std::string& n : sheet.notes) s.paragraphs.push_back(n);
  return s;
}

}  // namespace opmap::analysis
