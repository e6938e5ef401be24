// ClickHouseStore: the rows a complete session adds to each per-session table — its
// rollup, device times, counters, drops, unavailable entries and power, its events, and
// its sessions row (the completion marker) — appended to a group's bodies. Every row
// carries the flush that wrote it (clickhouse_store.h "Exactly once"); rows are sorted by
// their key within a session, so a session's rows do not depend on hash-map order.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/modules.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/rollup_buckets.h"

namespace opmap::collector {

using clickhouse_internal::RowBinaryWriter;

namespace {

// The rows of one table in key order (stable), each written by `write(w, item, ordinal)`
// and then the flush.
template <typename T, typename Key, typename Write>
void AppendSorted(const std::vector<T>& items, Key key, Write write, uint64_t flush,
                  RowBinaryWriter& w) {
  std::vector<const T*> rows;
  rows.reserve(items.size());
  for (const T& item : items) rows.push_back(&item);
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const T* x, const T* y) { return key(*x) < key(*y); });
  for (size_t n = 0; n < rows.size(); ++n) {
    write(w, *rows[n], n);
    w.UInt64(flush);
  }
}

}  // namespace

void ClickHouseStore::AppendSession(const opmap::v1::Batch& b, const BatchCommit& commit,
                                    const SessionWindow& window, uint64_t flush,
                                    uint32_t flush_sessions,
                                    clickhouse_internal::SessionRows& out) const {
  const analysis::SessionRollup& rollup = *commit.rollup;
  const opmap::v1::Resource& res = b.resource();
  const std::string& agent = b.agent_id();
  const std::string& session = b.session_id();
  AppendSorted(
      rollup.rows,
      [](const analysis::RollupRow& r) {
        return std::tie(r.subject, r.layer_type, r.operator_name, r.kernel_name, r.module);
      },
      [&](RowBinaryWriter& w, const analysis::RollupRow& row, size_t n) {
        const stats::DDSketch& sk = row.sketch;
        w.String(agent);
        w.String(session);
        w.UInt8(static_cast<uint8_t>(row.subject));
        w.UInt32(static_cast<uint32_t>(n));
        w.String(row.layer_type);
        w.String(row.operator_name);
        w.String(row.kernel_name);
        w.String(row.module);
        // Computed here, once, so MODULE_TYPE groups server-side like any column.
        w.String(analysis::ModuleTypeOf(row.module));
        w.String(res.host());
        w.String(res.model_revision());
        w.Int64(row.count);
        w.Int64(row.sum_ns);
        w.Int64(row.min_ns);
        w.Int64(row.max_ns);
        w.Int32(sk.scale());
        w.Int32(sk.offset());
        w.UInt64(sk.zero_count());
        w.UInt64(sk.count());
        w.Float64(sk.sum());
        // An empty sketch's min/max are NaN; stored as 0, as SQLite does.
        w.Float64(sk.empty() ? 0 : sk.min());
        w.Float64(sk.empty() ? 0 : sk.max());
        w.ArrayUInt64(sk.bins());
      },
      flush, out.rollups);
  AppendSorted(
      rollup.devices, [](const analysis::DeviceBreakdown& d) { return d.device; },
      [&](RowBinaryWriter& w, const analysis::DeviceBreakdown& d, size_t) {
        // The resource names the GPU behind each ordinal; its UUID identifies the board
        // across processes (ordinals differ with CUDA_VISIBLE_DEVICES).
        std::string_view uuid, name;
        for (const opmap::v1::Gpu& gpu : res.gpus()) {
          if (static_cast<int64_t>(gpu.device()) == d.device) {
            uuid = gpu.uuid();
            name = gpu.name();
            break;
          }
        }
        w.String(agent);
        w.String(session);
        w.String(res.host());
        w.Int64(d.device);
        w.String(uuid);
        w.String(name);
        w.Int64(d.span_ns);
        w.Int64(d.busy_ns);
        w.Int64(d.idle_ns);
        w.Int64(d.compute_ns);
        w.Int64(d.non_compute_ns);
        w.Int64(d.event_count);
      },
      flush, out.device_times);
  if (commit.telemetry != nullptr) {
    const SessionTelemetry& t = *commit.telemetry;
    AppendSorted(
        t.counters, [](const CounterTotal& c) { return std::tie(c.name, c.source, c.pid); },
        [&](RowBinaryWriter& w, const CounterTotal& c, size_t) {
          w.String(agent);
          w.String(session);
          w.String(c.name);
          w.Int32(c.source);
          w.Int64(c.pid);
          w.Int64(c.samples);
          w.Int64(c.value);
          w.Int64(c.time_enabled_ns);
          w.Int64(c.time_running_ns);
        },
        flush, out.counters);
    AppendSorted(
        t.drops, [](const DropTotal& d) { return std::tie(d.stage, d.kind, d.reason); },
        [&](RowBinaryWriter& w, const DropTotal& d, size_t) {
          w.String(agent);
          w.String(session);
          w.Int32(d.stage);
          w.Int32(d.kind);
          w.String(d.reason);
          w.Int64(d.count);
        },
        flush, out.drops);
    AppendSorted(
        t.unavailable, [](const std::pair<std::string, std::string>& u) { return u; },
        [&](RowBinaryWriter& w, const std::pair<std::string, std::string>& u, size_t n) {
          w.String(agent);
          w.String(session);
          w.UInt32(static_cast<uint32_t>(n));
          w.String(u.first);
          w.String(u.second);
        },
        flush, out.unavailable);
    AppendSorted(
        t.power,
        [](const opmap::v1::PowerSample& p) { return std::make_pair(int{p.domain()}, p.device()); },
        [&](RowBinaryWriter& w, const opmap::v1::PowerSample& p, size_t) {
          w.String(agent);
          w.String(session);
          clickhouse_internal::WritePowerRow(p, w);
        },
        flush, out.power);
  }
  AppendEvents(b, commit, flush, out);
  if (window.bucket.has_value()) AppendBuckets(b, rollup, *window.bucket, flush, out);
  // Last, and inserted last: the session is complete once this row is stored.
  const clickhouse_internal::Labels labels = clickhouse_internal::SortedLabels(res);
  using analysis::MappingRule;
  auto rule = [&](MappingRule r) { return rollup.by_rule[static_cast<int>(r)]; };
  RowBinaryWriter& w = out.sessions;
  w.String(agent);
  w.String(session);
  w.UInt64(b.seq());
  w.UInt32(commit.string_count_after);
  w.String(res.host());
  w.String(res.model_name());
  w.String(res.model_revision());
  w.ArrayString(labels.keys);
  w.ArrayString(labels.values);
  w.Int64(window.start_ns);
  w.Int64(window.end_ns);
  w.Int64(rollup.gpu_event_count);
  w.Int64(rollup.gpu_time_ns);
  w.Int64(rule(MappingRule::kGraphNode));
  w.Int64(rule(MappingRule::kExternalId));
  w.Int64(rule(MappingRule::kLaunchNesting));
  w.Int64(rule(MappingRule::kGraphLaunch));
  w.Int64(rule(MappingRule::kUnmapped));
  w.UInt8(window.bucket.has_value() ? 1 : 0);
  w.Int64(window.bucket.value_or(0));
  w.UInt64(flush);
  w.UInt32(flush_sessions);
}

absl::Status ClickHouseStore::InsertSessionRows(const clickhouse_internal::SessionRows& rows) {
  struct Body {
    const char* table;
    const char* columns;
    const RowBinaryWriter* rows;
  };
  const Body bodies[] = {
      {"rollups",
       "agent, session, subject, ordinal, layer_type, operator, kernel, module, module_type, "
       "host, revision, count, sum_ns, min_ns, max_ns, sketch_scale, sketch_offset, "
       "sketch_zero, sketch_count, sketch_sum, sketch_min, sketch_max, sketch_bins, flush",
       &rows.rollups},
      {"device_times",
       "agent, session, host, device, gpu_uuid, gpu_name, span_ns, busy_ns, idle_ns, "
       "compute_ns, non_compute_ns, event_count, flush",
       &rows.device_times},
      {"session_counters",
       "agent, session, name, source, pid, samples, value, time_enabled_ns, time_running_ns, "
       "flush",
       &rows.counters},
      {"session_drops", "agent, session, stage, kind, reason, count, flush", &rows.drops},
      {"session_unavailable", "agent, session, ordinal, what, reason, flush", &rows.unavailable},
      {"session_power", clickhouse_internal::kPowerColumns, &rows.power},
      {"events", clickhouse_internal::kEventColumns, &rows.events},
      {"flush_buckets", clickhouse_internal::kBucketColumns, &rows.buckets},
      {"sessions",
       "agent, session, last_seq, string_count, host, model, revision, label_keys, "
       "label_values, window_start_ns, window_end_ns, gpu_event_count, gpu_time_ns, "
       "rule_graph_node, rule_external_id, rule_launch_nesting, rule_graph_launch, "
       "rule_unmapped, bucketed, bucket_ns, flush, flush_sessions",
       &rows.sessions},
  };
  for (const Body& body : bodies) {
    if (body.rows->data().empty()) continue;
    RETURN_IF_ERROR(Insert(body.table, body.columns, body.rows->data()));
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector
