#include "analysis/bottleneck/evidence_format.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text/units.h"

namespace opmap::analysis::bottleneck_format {

std::string UsText(double ns) { return text::Micros(ns) + " µs"; }

std::string Number(double v) {
  if (!std::isfinite(v)) return "n/a";
  return absl::StrFormat("%.3g", v);
}

std::string ValueOr(std::optional<double> v, std::string_view unit, std::string_view why) {
  if (!v.has_value()) {
    return absl::StrCat("unavailable: ", std::string(why.empty() ? "not measured" : why));
  }
  // Times are carried in ns but read in µs, like every other opmap table.
  if (unit == "ns") return absl::StrFormat("%.1f µs", *v / 1000.0);
  if (unit.empty() || unit == "fraction") return Number(*v);
  return absl::StrCat(Number(*v), " ", std::string(unit));
}

std::string EvidenceValue(const Evidence& e) {
  std::string text = ValueOr(e.value, e.unit, e.missing);
  // A measured value whose rule still lacked a figure (U_c known, U_m not) says so.
  if (e.value.has_value() && !e.missing.empty()) absl::StrAppend(&text, " (", e.missing, ")");
  return text;
}

std::string EvidenceLine(const Evidence& e) {
  const char* verdict = !e.missing.empty() ? "undecided" : (e.met ? "met" : "not met");
  return absl::StrCat(e.figure, " = ", EvidenceValue(e), " (", e.rule, ": ", verdict, ")");
}

void OptionalDouble(text::JsonWriter& w, std::string_view key, std::optional<double> v,
                    int decimals) {
  w.Key(key);
  if (v.has_value()) {
    w.Double(*v, decimals);
  } else {
    w.Null();
  }
}

void WriteEvidenceJson(const Evidence& e, text::JsonWriter& w) {
  w.BeginObject();
  w.Field("figure", e.figure);
  OptionalDouble(w, "value", e.value);
  w.Field("unit", e.unit).Field("rule", e.rule);
  w.Key("met").Bool(e.met);
  if (!e.missing.empty()) w.Field("missing", e.missing);
  w.EndObject();
}

void WriteClassificationJson(const Classification& c, text::JsonWriter& w) {
  w.BeginObject();
  w.Field("class", BottleneckClassName(c.cls));
  OptionalDouble(w, "u_compute", c.u_compute);
  OptionalDouble(w, "u_memory", c.u_memory);
  OptionalDouble(w, "intensity_flop_per_byte", c.intensity, 3);
  OptionalDouble(w, "ridge_flop_per_byte", c.ridge, 3);
  w.Field("summary", c.summary);
  w.Key("evidence").BeginArray();
  for (const Evidence& e : c.evidence) WriteEvidenceJson(e, w);
  w.EndArray();
  w.EndObject();
}

}  // namespace opmap::analysis::bottleneck_format
