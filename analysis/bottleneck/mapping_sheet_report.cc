// JSON and display forms of the mapping sheet. Missing figures print as
// "unavailable: <reason>" (JSON: null plus a reason field), never as 0.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/bottleneck/evidence_format.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/report/report_fields.h"

namespace opmap::analysis {
namespace {

using bottleneck_format::Number;
using bottleneck_format::OptionalDouble;
using report_fields::Shorten;
using report_fields::Us;

constexpr size_t kNameWidth = 60;

std::string Dim3(const std::array<int32_t, 3>& d) {
  if (d[0] <= 0) return "unavailable: not recorded";
  return absl::StrCat(d[0], "x", d[1], "x", d[2]);
}

void WriteDim3(JsonWriter& w, std::string_view key, const std::array<int32_t, 3>& d) {
  w.Key(key);
  if (d[0] <= 0) {
    w.Null();
    return;
  }
  w.BeginArray().Int(d[0]).Int(d[1]).Int(d[2]).EndArray();
}

std::string Percent(double share) { return absl::StrFormat("%.1f", 100.0 * share); }
std::string UsText(int64_t ns) { return absl::StrFormat("%.1f", Us(static_cast<double>(ns))); }

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

}  // namespace

void WriteMappingSheetJson(const MappingSheet& sheet, JsonWriter& w) {
  w.BeginObject();
  w.Field("gpu_time_ns", sheet.gpu_time_ns);
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
    OptionalDouble(w, "intensity_flop_per_byte", op.intensity, 3);
    if (!op.intensity) w.Field("intensity_unavailable", IntensityMissing(op));
    w.Field("expected", BottleneckClassName(op.expected));
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

DocSection MappingSheetSection(const MappingSheet& sheet, int top_operators) {
  DocSection s;
  s.heading = "Operator-to-kernel mapping sheet";
  s.facts.emplace_back("GPU time", absl::StrCat(UsText(sheet.gpu_time_ns), " µs (summed)"));
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
    const std::string name = Shorten(op.name, kNameWidth);
    ops.rows.push_back({name, std::string(LayerTypeName(op.layer_type)),
                        absl::StrCat(op.instances), UsText(op.gpu_time_ns), Percent(op.share),
                        op.flops ? Number(*op.flops) : absl::StrCat("unavailable: ", op.flops_formula),
                        IntensityText(op), std::string(BottleneckClassName(op.expected)),
                        std::string(BottleneckClassName(op.observed.cls)), op.observed.summary});
    for (const SheetKernel& k : op.kernels) {
      kernels.rows.push_back(
          {name, Shorten(k.name, kNameWidth), absl::StrCat(k.count), Dim3(k.grid), Dim3(k.block),
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
  s.tables.push_back(std::move(kernels));
  s.tables.push_back(std::move(evidence));

  DocTable fusion;
  fusion.title = "Fusion candidates";
  fusion.columns = {"stream", "kernels", "operators", "occurrences", "GPU µs", "saving bound µs",
                    "before", "after"};
  fusion.align_right = {true, false, false, true, true, true, false, false};
  for (const FusionCandidate& c : sheet.fusion) {
    std::vector<std::string> short_kernels;
    for (const std::string& k : c.kernels) short_kernels.push_back(Shorten(k, 40));
    fusion.rows.push_back({absl::StrCat(c.stream), absl::StrJoin(short_kernels, " → "),
                           absl::StrJoin(c.operators, " → "), absl::StrCat(c.occurrences),
                           UsText(c.gpu_time_ns), UsText(c.saving_bound_ns),
                           Shorten(c.before, 40), Shorten(c.after, 40)});
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
