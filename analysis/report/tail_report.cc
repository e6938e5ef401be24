#include "analysis/report/tail_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/report/report_fields.h"
#include "analysis/summary/tail_buckets.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using report_fields::Rows;
using report_fields::Us;

void ExcessJson(text::JsonWriter& w, const char* key, const std::vector<ComponentExcess>& rows,
                int top) {
  w.Key(key).BeginArray();
  for (size_t i = 0; i < Rows(rows.size(), top); ++i) {
    const ComponentExcess& c = rows[i];
    w.BeginObject();
    w.Field("kind", RequestComponentKindName(c.kind)).Field("label", c.label);
    w.Field("tail_mean_us", Us(c.tail_mean_ns)).Field("band_mean_us", Us(c.band_mean_ns));
    w.Field("excess_us", Us(c.excess_ns)).Field("share", c.share);
    w.EndObject();
  }
  w.EndArray();
}

void ExcessTable(std::string& out, const char* title, const std::vector<ComponentExcess>& rows,
                 int top) {
  const size_t n = Rows(rows.size(), top);
  absl::StrAppendFormat(&out, "  excess by %s (%d of %d)\n", title, n, rows.size());
  absl::StrAppendFormat(&out, "    %-14s %-32s %12s %12s %12s %7s\n", "kind", "label",
                        "tail_us", "band_us", "excess_us", "share");
  for (size_t i = 0; i < n; ++i) {
    const ComponentExcess& c = rows[i];
    absl::StrAppendFormat(&out, "    %-14s %-32s %12.1f %12.1f %12.1f %6.1f%%\n",
                          RequestComponentKindName(c.kind),
                          text::PrintableCell(c.label.empty() ? "-" : c.label, 32),
                          Us(c.tail_mean_ns), Us(c.band_mean_ns), Us(c.excess_ns),
                          100 * c.share);
  }
}

}  // namespace

void TailJson(text::JsonWriter& w, const RequestTailSummary& s, int top) {
  w.Key("tail").BeginObject();
  w.Field("requests", s.requests);
  if (s.from_buckets) {
    w.Key("from_latency_buckets").Bool(true);
    w.Field("bucket_alpha", kTailBucketAlpha);
  } else {  // per-request facts: latency buckets do not know them (no zeros in their place)
    w.Field("requests_with_gpu_events", s.requests_with_gpu_events);
    w.Field("joined_requests", s.joined_requests).Field("max_sum_error_ns", s.max_sum_error_ns);
    w.Field("arrival_marked_requests", s.arrival_marked_requests);
    w.Field("arrival_marks_dropped", s.arrival_marks_dropped);
  }
  if (!s.unavailable.empty()) w.Field("unavailable", s.unavailable);
  w.Key("compositions").BeginArray();
  for (const KeyComposition& k : s.compositions) {
    w.BeginObject();
    w.Field("key", k.key).Field("requests", k.requests).Field("mean_us", Us(k.mean_dur_ns));
    w.Key("components").BeginArray();
    for (size_t i = 0; i < Rows(k.parts.size(), top); ++i) {
      const KeyComposition::Part& p = k.parts[i];
      w.BeginObject();
      w.Field("kind", RequestComponentKindName(p.component.kind));
      w.Field("layer_type", LayerTypeName(p.component.layer_type));
      w.Field("module", p.component.module);
      w.Field("mean_us", Us(p.mean_ns)).Field("share", p.share);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("explanations").BeginArray();
  for (const TailExplanation& t : s.explanations) {
    w.BeginObject();
    w.Field("key", t.key).Field("quantile", t.quantile).Field("requests", t.requests);
    if (!t.unavailable.empty()) {
      w.Field("unavailable", t.unavailable);
      w.EndObject();
      continue;
    }
    w.Field("tail_requests", t.tail_requests).Field("band_requests", t.band_requests);
    w.Field("p50_us", Us(t.p50_ns)).Field("quantile_us", Us(t.quantile_ns));
    w.Field("tail_mean_us", Us(t.tail_mean_ns)).Field("band_mean_us", Us(t.band_mean_ns));
    w.Field("gap_us", Us(t.gap_ns)).Field("sentence", t.sentence);
    ExcessJson(w, "by_module", t.by_module, top);
    ExcessJson(w, "by_layer_type", t.by_layer_type, top);
    w.Key("exemplars").BeginArray();
    for (const TailExemplar& e : t.exemplars) {
      w.BeginObject();
      w.Field("name", e.name).Field("start_ns", e.start_ns).Field("dur_us", Us(e.dur_ns));
      w.Field("extent_us", Us(e.extent_ns));
      if (e.payload != kNone) w.Field("request_id", e.payload);
      if (e.process != kNone) w.Field("pid", e.process);
      if (e.thread != kNone) w.Field("tid", e.thread);
      if (!e.session.empty()) w.Field("session", e.session);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

DocSection TailSection(const RequestTailSummary& s, int top) {
  DocSection d;
  d.heading = "Tail latency";
  if (!s.unavailable.empty()) {
    d.paragraphs.push_back("unavailable: " + s.unavailable);
    return d;
  }
  d.paragraphs.push_back(absl::StrFormat(
      "%d requests; each request's time split into queue, GPU time, copies, GPU wait, host "
      "time in operators and host gaps (docs/metrics.md, \"Tail latency\"); the tail's mean "
      "of each against the p40-p60 band's.",
      s.requests));
  const size_t rows = top > 0 ? static_cast<size_t>(top) : 10;
  for (const TailExplanation& t : s.explanations) {
    if (!t.unavailable.empty()) {
      d.paragraphs.push_back(absl::StrFormat("%s p%g: unavailable: %s", t.key, t.quantile * 100,
                                             t.unavailable));
      continue;
    }
    d.paragraphs.push_back(absl::StrFormat("%s p%g: %s.", t.key, t.quantile * 100, t.sentence));
    if (t.quantile != 0.99) continue;
    for (auto [title, list] : {std::pair{"by kind and module", &t.by_module},
                               std::pair{"by kind and layer type", &t.by_layer_type}}) {
      DocTable table;
      table.title = absl::StrFormat("%s p99 excess %s", t.key, title);
      table.columns = {"kind", "label", "tail_us", "band_us", "excess_us", "share"};
      table.align_right = {false, false, true, true, true, true};
      for (size_t i = 0; i < list->size() && i < rows; ++i) {
        const ComponentExcess& c = (*list)[i];
        table.rows.push_back({std::string(RequestComponentKindName(c.kind)),
                              c.label.empty() ? "-" : c.label,
                              absl::StrFormat("%.1f", Us(c.tail_mean_ns)),
                              absl::StrFormat("%.1f", Us(c.band_mean_ns)),
                              absl::StrFormat("%.1f", Us(c.excess_ns)),
                              absl::StrFormat("%.1f%%", 100 * c.share)});
      }
      d.tables.push_back(std::move(table));
    }
  }
  return d;
}

std::string TailTable(const RequestTailSummary& s, int top) {
  std::string out;
  if (!s.unavailable.empty()) {
    absl::StrAppendFormat(&out, "\ntail latency: unavailable: %s\n", s.unavailable);
    return out;
  }
  if (s.from_buckets) {
    absl::StrAppendFormat(&out,
                          "\ntail latency: %d requests, from latency buckets about %.1f%% wide "
                          "(tail and band end on bucket boundaries)\n",
                          s.requests, 100 * (2 * kTailBucketAlpha / (1 - kTailBucketAlpha)));
  } else {
    absl::StrAppendFormat(&out,
                          "\ntail latency: %d requests (%d joined to their service ranges by "
                          "payload, %d from an arrival mark, %d with GPU events); components "
                          "sum to each duration (largest error %d ns)\n",
                          s.requests, s.joined_requests, s.arrival_marked_requests,
                          s.requests_with_gpu_events, s.max_sum_error_ns);
  }
  const int rows = top > 0 ? std::min(top, 8) : 8;
  for (const KeyComposition& k : s.compositions) {
    const size_t n = Rows(k.parts.size(), rows);
    absl::StrAppendFormat(&out, "%s: %d request%s, mean %.1f us; largest components (%d of %d)\n",
                          k.key, k.requests, k.requests == 1 ? "" : "s", Us(k.mean_dur_ns), n,
                          k.parts.size());
    absl::StrAppendFormat(&out, "    %-14s %-12s %-32s %12s %7s\n", "kind", "layer_type", "module",
                          "mean_us", "share");
    for (size_t i = 0; i < n; ++i) {
      const KeyComposition::Part& p = k.parts[i];
      absl::StrAppendFormat(&out, "    %-14s %-12s %-32s %12.1f %6.1f%%\n",
                            RequestComponentKindName(p.component.kind),
                            LayerTypeName(p.component.layer_type),
                            text::PrintableCell(p.component.module.empty() ? "-" : p.component.module, 32),
                            Us(p.mean_ns), 100 * p.share);
    }
  }
  for (const TailExplanation& t : s.explanations) {
    if (!t.unavailable.empty()) {
      absl::StrAppendFormat(&out, "%s p%g: unavailable: %s\n", t.key, t.quantile * 100,
                            t.unavailable);
      continue;
    }
    absl::StrAppendFormat(&out, "%s p%g: %s\n", t.key, t.quantile * 100, t.sentence);
    ExcessTable(out, "kind and module", t.by_module, rows);
    ExcessTable(out, "kind and layer type", t.by_layer_type, rows);
    if (t.exemplars.empty()) continue;
    out.append("  slowest:");
    for (const TailExemplar& e : t.exemplars) {
      absl::StrAppendFormat(&out, " %.1f us", Us(e.extent_ns));
      if (e.payload != kNone) absl::StrAppendFormat(&out, " (id %d", e.payload);
      if (!e.session.empty()) {
        absl::StrAppendFormat(&out, "%s%s", e.payload != kNone ? ", " : " (",
                              text::PrintableCell(e.session, 80));
      }
      if (e.payload != kNone || !e.session.empty()) out.append(")");
    }
    out.append("\n");
  }
  return out;
}

}  // namespace opmap::analysis
