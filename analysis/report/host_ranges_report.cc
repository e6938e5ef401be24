#include "analysis/report/host_ranges_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "analysis/report/analyze_report.h"

#include "analysis/report/report_fields.h"
#include "common/text/csv.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::Rows;
using report_fields::Us;

}  // namespace

void SourceFactsJson(text::JsonWriter& w, const TraceInfo& info) {
  w.Key("unavailable").BeginArray();
  for (const auto& [what, reason] : info.unavailable) {
    w.BeginObject().Field("what", what).Field("reason", reason).EndObject();
  }
  w.EndArray();
  w.Key("source_counters").BeginObject();
  for (const auto& [name, value] : info.counters) w.Field(name, value);
  w.EndObject();
}

std::string SourceFactsTable(const TraceInfo& info) {
  std::string out;
  for (const auto& [what, reason] : info.unavailable) {
    absl::StrAppendFormat(&out, "unavailable: %s: %s\n", what, reason);
  }
  if (!info.counters.empty()) {
    out.append("source counters:");
    for (const auto& [name, value] : info.counters) {
      absl::StrAppendFormat(&out, " %s %d", name, value);
    }
    out.append("\n");
  }
  return out;
}

void HostRangesJson(text::JsonWriter& w, const HostRangeSummary& s, int top) {
  w.Key("host_ranges").BeginObject();
  w.Field("range_count", s.range_count).Field("thread_count", s.thread_count);
  w.Field("self_time_us", Us(s.self_ns));
  w.Key("layer_types").BeginArray();
  for (const HostLayerTypeStats& t : s.layer_types) {
    w.BeginObject();
    w.Field("layer_type", LayerTypeName(t.layer_type)).Field("count", t.count);
    w.Field("self_time_us", Us(t.self_ns)).Field("share", t.self_share, 6);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ranges").BeginArray();
  for (size_t i = 0; i < Rows(s.ranges.size(), top); ++i) {
    const HostRangeStats& r = s.ranges[i];
    w.BeginObject();
    w.Field("name", r.name).Field("layer_type", LayerTypeName(r.layer_type));
    w.Field("count", r.count).Field("total_time_us", Us(r.total_ns));
    w.Field("self_time_us", Us(r.self_ns)).Field("share", r.self_share, 6);
    w.Field("p50_us", Us(r.duration_ns.p50)).Field("p95_us", Us(r.duration_ns.p95));
    w.Field("p99_us", Us(r.duration_ns.p99));
    if (r.flops != kNone) w.Field("flops", r.flops); else w.Key("flops").Null();
    if (r.bytes != kNone) w.Field("bytes", r.bytes); else w.Key("bytes").Null();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string HostRangesTable(const HostRangeSummary& s, int top) {
  std::string out;
  if (s.range_count == 0) return out;
  absl::StrAppendFormat(&out,
                        "\nhost ranges: %d on %d threads, %.3f us self time "
                        "(a range's time minus its nested ranges')\n",
                        s.range_count, s.thread_count, Us(s.self_ns));
  absl::StrAppendFormat(&out, "%-14s %8s %14s %8s\n", "layer_type", "share", "self_us",
                        "ranges");
  for (const HostLayerTypeStats& t : s.layer_types) {
    absl::StrAppendFormat(&out, "%-14s %7.2f%% %14.3f %8d\n", LayerTypeName(t.layer_type),
                          100.0 * t.self_share, Us(t.self_ns), t.count);
  }
  const size_t n = Rows(s.ranges.size(), top);
  absl::StrAppendFormat(&out, "\nhost ranges (%d of %d, by self time)\n", n, s.ranges.size());
  absl::StrAppendFormat(&out, "%-40s %-12s %7s %8s %13s %10s %10s %10s\n", "name",
                        "layer_type", "count", "share", "self_us", "p50_us", "p95_us",
                        "p99_us");
  for (size_t i = 0; i < n; ++i) {
    const HostRangeStats& r = s.ranges[i];
    const std::string name = text::PrintableCell(r.name, 40);
    absl::StrAppendFormat(&out, "%-40s %-12s %7d %7.2f%% %13.3f %10.3f %10.3f %10.3f\n", name,
                          LayerTypeName(r.layer_type), r.count, 100.0 * r.self_share,
                          Us(r.self_ns), Us(r.duration_ns.p50), Us(r.duration_ns.p95),
                          Us(r.duration_ns.p99));
  }
  return out;
}

std::string HostRangesCsv(const HostRangeSummary& s, const std::string& file_field, int top) {
  std::string out;
  for (const HostLayerTypeStats& t : s.layer_types) {
    absl::StrAppendFormat(&out, "%s,host_layer_type,%s,%s,%d,%.3f,%.6f,,,,,,,,\n", file_field,
                          LayerTypeName(t.layer_type), LayerTypeName(t.layer_type), t.count,
                          Us(t.self_ns), t.self_share);
  }
  for (size_t i = 0; i < Rows(s.ranges.size(), top); ++i) {
    const HostRangeStats& r = s.ranges[i];
    std::string name;
    text::AppendCsvField(r.name, &name);
    absl::StrAppendFormat(&out, "%s,host_range,%s,%s,%d,%.3f,%.6f,%.3f,%.3f,%.3f,,,,,\n",
                          file_field, name, LayerTypeName(r.layer_type), r.count,
                          Us(r.self_ns), r.self_share, Us(r.duration_ns.p50),
                          Us(r.duration_ns.p95), Us(r.duration_ns.p99));
  }
  return out;
}

}  // namespace opmap::analysis
