#include "analysis/report/analyze_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/report/host_ranges_report.h"
#include "common/text/json_writer.h"
#include "analysis/report/report_fields.h"
#include "analysis/report/modules_report.h"
#include "analysis/report/stalls_report.h"
#include "analysis/report/tail_report.h"
#include "analysis/report/timeline_report.h"
#include "common/text/csv.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::PercentileFields;
using report_fields::Rows;
using report_fields::Us;

void StreamingJson(text::JsonWriter& w, const StreamingFacts& f) {
  w.Key("streaming").BeginObject();
  w.Field("parts", f.parts);
  w.Field("largest_part_events", f.largest_part_events);
  w.Field("spilled_bytes", static_cast<int64_t>(f.spilled_bytes));
  w.Field("spill_runs", f.spill_runs);
  w.Field("memory_budget_bytes", static_cast<int64_t>(f.memory_budget_bytes));
  w.Field("sketched_rows", f.sketched_rows);
  w.Field("launches_not_held", f.launches_not_held);
  w.Field("late_events", f.late_events);
  w.Field("forced_cuts", f.forced_cuts);
  w.Field("calls_past_cap", f.calls_past_cap);
  w.EndObject();
}

// A line only when streaming had to do without something the whole trace has.
std::string StreamingTable(const StreamingFacts& f) {
  std::string out;
  if (f.launches_not_held > 0) {
    absl::StrAppendFormat(&out,
                          "streaming: %d GPU events mapped without their launch call (let go "
                          "before their GPU work began: docs/metrics.md, \"Traces of any "
                          "size\")\n",
                          f.launches_not_held);
  }
  if (f.forced_cuts > 0 || f.calls_past_cap > 0) {
    absl::StrAppendFormat(&out,
                          "streaming: memory bounds reached (%d parts cut between events of one "
                          "start, %d launch calls let go past the cap): some launches may map "
                          "as the whole trace would not\n",
                          f.forced_cuts, f.calls_past_cap);
  }
  if (f.late_events > 0) {
    absl::StrAppendFormat(&out, "streaming: %d events arrived after their part was summarized\n",
                          f.late_events);
  }
  return out;
}

void MappingJson(text::JsonWriter& w, const TraceSummary& s) {
  w.Key("mapping").BeginObject();
  w.Key("by_rule").BeginObject();
  for (int r = 0; r < kMappingRuleCount; ++r) {
    w.Field(MappingRuleName(static_cast<MappingRule>(r)), s.by_rule[r]);
  }
  w.EndObject();
  w.Key("unmapped_reasons").BeginObject();
  for (int r = 1; r < kUnmappedReasonCount; ++r) {
    w.Field(UnmappedReasonName(static_cast<UnmappedReason>(r)), s.unmapped_by_reason[r]);
  }
  w.EndObject();
  w.Key("layer_type_source").BeginObject();
  w.Field("operator", s.layer_type_source_operator);
  w.Field("kernel_name", s.layer_type_source_kernel_name);
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string RenderAnalyzeJson(const TraceSummary& s, const ReportOptions& options) {
  text::JsonWriter w;
  w.BeginObject();
  w.Field("file", options.source);
  w.Field("format", s.info.format);
  w.Key("gpus").BeginArray();
  for (const std::string& g : s.info.gpu_names) w.String(g);
  w.EndArray();
  w.Field("percentiles", s.streaming.sketched_rows == 0
                             ? "exact (linear interpolation between closest ranks)"
                             : "exact (linear interpolation between closest ranks), except rows "
                               "marked \"percentiles\": \"ddsketch\" (DDSketch, ±0.54%)");
  if (s.streaming.streamed) StreamingJson(w, s.streaming);
  w.Field("gpu_event_count", s.gpu_event_count);
  w.Field("gpu_time_us", Us(s.gpu_time_ns));
  SourceFactsJson(w, s.info);

  w.Key("devices").BeginArray();
  for (const DeviceBreakdown& d : s.devices) {
    w.BeginObject();
    w.Field("device", static_cast<int64_t>(d.device));
    w.Field("span_us", Us(d.span_ns)).Field("busy_us", Us(d.busy_ns));
    w.Field("idle_us", Us(d.idle_ns)).Field("compute_us", Us(d.compute_ns));
    w.Field("non_compute_us", Us(d.non_compute_ns));
    w.Field("event_count", static_cast<int64_t>(d.event_count));
    w.EndObject();
  }
  w.EndArray();

  w.Key("layer_types").BeginArray();
  for (const LayerTypeStats& l : s.layer_types) {
    w.BeginObject();
    w.Field("layer_type", LayerTypeName(l.layer_type));
    w.Field("count", l.count).Field("gpu_time_us", Us(l.gpu_time_ns));
    w.Field("share", l.share, 6);
    w.EndObject();
  }
  w.EndArray();

  w.Key("operators").BeginArray();
  for (size_t i = 0; i < Rows(s.operators.size(), options.top); ++i) {
    const OperatorStats& o = s.operators[i];
    w.BeginObject();
    w.Field("name", o.name).Field("layer_type", LayerTypeName(o.layer_type));
    w.Field("layer_type_rule", o.layer_type_from_name ? "operator_name" : "kernel_majority");
    w.Field("count", o.count).Field("kernel_count", o.kernel_count);
    w.Field("gpu_time_us", Us(o.gpu_time_ns));
    PercentileFields(w, o.instance_gpu_time_ns);
    w.EndObject();
  }
  w.EndArray();

  w.Key("kernels").BeginArray();
  for (size_t i = 0; i < Rows(s.kernels.size(), options.top); ++i) {
    const KernelStats& k = s.kernels[i];
    w.BeginObject();
    w.Field("name", k.name).Field("layer_type", LayerTypeName(k.layer_type));
    w.Field("count", k.count).Field("gpu_time_us", Us(k.gpu_time_ns));
    w.Field("min_us", Us(k.min_ns)).Field("max_us", Us(k.max_ns));
    PercentileFields(w, k.duration_ns);
    w.EndObject();
  }
  w.EndArray();

  MappingJson(w, s);
  TimelineJson(w, s.idle_time, s.launch_stats);
  ModulesJson(w, s.modules, options.top);
  HostRangesJson(w, s.host_ranges, options.top);
  TailJson(w, s.tail, options.top);
  StallsJson(w, s.stalls, options.top);
  if (options.launches) LaunchesJson(w, s.launches);
  w.EndObject();
  return w.Take();
}

std::string RenderAnalyzeTable(const TraceSummary& s, const ReportOptions& options) {
  std::string out;
  absl::StrAppendFormat(&out, "%s  (%s%s%s)\n", options.source, s.info.format,
                        s.info.gpu_names.empty() ? "" : ", ",
                        s.info.gpu_names.empty() ? "" : s.info.gpu_names.front());
  absl::StrAppendFormat(&out,
                        "%d GPU events, %.3f us summed GPU time; percentiles exact "
                        "(linear interpolation)%s\n",
                        s.gpu_event_count, Us(s.gpu_time_ns),
                        s.streaming.sketched_rows > 0
                            ? ", except rows marked ~: DDSketch (±0.54%), past --memory-budget"
                            : "");
  out.append(StreamingTable(s.streaming));
  out.append("\n");
  out.append(SourceFactsTable(s.info));
  if (s.gpu_event_count == 0) {
    // Host-only capture (no GPU, or CUPTI unavailable: said above): the GPU tables would
    // all be empty, so one line says so and the host sections follow.
    out.append("\nGPU: no GPU events in this trace\n");
    out.append(HostRangesTable(s.host_ranges, options.top));
    out.append(TailTable(s.tail, options.top));
    out.append(StallsTable(s.stalls, options.top));
    return out;
  }
  absl::StrAppendFormat(&out, "%-8s %14s %14s %14s %14s %14s\n", "device", "span_us",
                        "busy_us", "idle_us", "compute_us", "non_compute_us");
  for (const DeviceBreakdown& d : s.devices) {
    absl::StrAppendFormat(&out, "%-8d %14.3f %14.3f %14.3f %14.3f %14.3f\n", d.device,
                          Us(d.span_ns), Us(d.busy_ns), Us(d.idle_ns), Us(d.compute_ns),
                          Us(d.non_compute_ns));
  }
  absl::StrAppendFormat(&out, "\n%-14s %8s %14s %8s\n", "layer_type", "share", "gpu_time_us",
                        "events");
  for (const LayerTypeStats& l : s.layer_types) {
    absl::StrAppendFormat(&out, "%-14s %7.2f%% %14.3f %8d\n", LayerTypeName(l.layer_type),
                          100.0 * l.share, Us(l.gpu_time_ns), l.count);
  }
  size_t n_ops = Rows(s.operators.size(), options.top);
  absl::StrAppendFormat(&out, "\noperators (%d of %d, by GPU time)\n", n_ops, s.operators.size());
  absl::StrAppendFormat(&out, "%-40s %-12s %7s %8s %13s %10s %10s %10s\n", "name", "layer_type",
                        "count", "kernels", "gpu_time_us", "p50_us", "p95_us", "p99_us");
  for (size_t i = 0; i < n_ops; ++i) {
    const OperatorStats& o = s.operators[i];
    absl::StrAppendFormat(&out, "%-40s %-12s %7d %8d %13.3f %10.3f %10.3f %10.3f%s\n",
                          text::PrintableCell(o.name, 40), LayerTypeName(o.layer_type), o.count,
                          o.kernel_count, Us(o.gpu_time_ns), Us(o.instance_gpu_time_ns.p50),
                          Us(o.instance_gpu_time_ns.p95), Us(o.instance_gpu_time_ns.p99),
                          o.instance_gpu_time_ns.sketched ? " ~" : "");
  }
  size_t n_k = Rows(s.kernels.size(), options.top);
  absl::StrAppendFormat(&out, "\nkernels (%d of %d, by GPU time)\n", n_k, s.kernels.size());
  absl::StrAppendFormat(&out, "%-60s %-12s %7s %13s %10s %10s %10s\n", "name", "layer_type",
                        "count", "gpu_time_us", "p50_us", "p95_us", "p99_us");
  for (size_t i = 0; i < n_k; ++i) {
    const KernelStats& k = s.kernels[i];
    absl::StrAppendFormat(&out, "%-60s %-12s %7d %13.3f %10.3f %10.3f %10.3f%s\n",
                          text::PrintableCell(k.name, 60), LayerTypeName(k.layer_type), k.count,
                          Us(k.gpu_time_ns), Us(k.duration_ns.p50), Us(k.duration_ns.p95),
                          Us(k.duration_ns.p99), k.duration_ns.sketched ? " ~" : "");
  }
  out.append("\nmapping (GPU events by rule):");
  for (int r = 0; r < kMappingRuleCount; ++r) {
    absl::StrAppendFormat(&out, " %s %d", MappingRuleName(static_cast<MappingRule>(r)),
                          s.by_rule[r]);
  }
  out.append("\n  unmapped reasons:");
  for (int r = 1; r < kUnmappedReasonCount; ++r) {
    absl::StrAppendFormat(&out, " %s %d", UnmappedReasonName(static_cast<UnmappedReason>(r)),
                          s.unmapped_by_reason[r]);
  }
  absl::StrAppendFormat(&out, "\n  layer type from: operator %d, kernel name (inferred) %d\n",
                        s.layer_type_source_operator, s.layer_type_source_kernel_name);
  out.append(ModulesTable(s.modules, options.top));
  out.append(TimelineTable(s.idle_time, s.launch_stats));
  out.append(HostRangesTable(s.host_ranges, options.top));
  out.append(TailTable(s.tail, options.top));
  out.append(StallsTable(s.stalls, options.top));
  return out;
}

std::string RenderAnalyzeCsv(const TraceSummary& s, const ReportOptions& options,
                             bool with_header) {
  std::string out;
  if (with_header) {
    out.append(
        "file,section,name,layer_type,count,gpu_time_us,share,p50_us,p95_us,p99_us,"
        "span_us,busy_us,idle_us,compute_us,non_compute_us\n");
  }
  std::string file;
  text::AppendCsvField(options.source, &file);
  for (const DeviceBreakdown& d : s.devices) {
    absl::StrAppendFormat(&out, "%s,device,%d,,%d,,,,,,%.3f,%.3f,%.3f,%.3f,%.3f\n", file,
                          d.device, d.event_count, Us(d.span_ns), Us(d.busy_ns), Us(d.idle_ns),
                          Us(d.compute_ns), Us(d.non_compute_ns));
  }
  for (const LayerTypeStats& l : s.layer_types) {
    absl::StrAppendFormat(&out, "%s,layer_type,%s,%s,%d,%.3f,%.6f,,,,,,,,\n", file,
                          LayerTypeName(l.layer_type), LayerTypeName(l.layer_type), l.count,
                          Us(l.gpu_time_ns), l.share);
  }
  for (size_t i = 0; i < Rows(s.operators.size(), options.top); ++i) {
    const OperatorStats& o = s.operators[i];
    std::string name;
    text::AppendCsvField(o.name, &name);
    absl::StrAppendFormat(&out, "%s,operator,%s,%s,%d,%.3f,,%.3f,%.3f,%.3f,,,,,\n", file, name,
                          LayerTypeName(o.layer_type), o.count, Us(o.gpu_time_ns),
                          Us(o.instance_gpu_time_ns.p50), Us(o.instance_gpu_time_ns.p95),
                          Us(o.instance_gpu_time_ns.p99));
  }
  for (size_t i = 0; i < Rows(s.kernels.size(), options.top); ++i) {
    const KernelStats& k = s.kernels[i];
    std::string name;
    text::AppendCsvField(k.name, &name);
    absl::StrAppendFormat(&out, "%s,kernel,%s,%s,%d,%.3f,,%.3f,%.3f,%.3f,,,,,\n", file, name,
                          LayerTypeName(k.layer_type), k.count, Us(k.gpu_time_ns),
                          Us(k.duration_ns.p50), Us(k.duration_ns.p95), Us(k.duration_ns.p99));
  }
  for (int r = 0; r < kMappingRuleCount; ++r) {
    absl::StrAppendFormat(&out, "%s,mapping,%s,,%d,,,,,,,,,,\n", file,
                          MappingRuleName(static_cast<MappingRule>(r)), s.by_rule[r]);
  }
  out.append(ModulesCsv(s.modules, s.gpu_time_ns, file, options.top));
  out.append(HostRangesCsv(s.host_ranges, file, options.top));
  out.append(StallsCsv(s.stalls, file, options.top));
  return out;
}

}  // namespace opmap::analysis
