// ClickHouseStore: a complete session's mapped events as rows of `events`
// (analysis/summary/event_rows.h), so analysts can ask ClickHouse their own questions in
// SQL (docs/scale-out.md). Written at the session's completion, before its sessions row,
// in BuildEventRows' fixed order, each row with the flush that wrote it: the rows that
// count are those of the flush the sessions table chose (docs/scale-out.md). All rows of a
// session go to its capture day's partition, so retention drops whole sessions.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status_macros.h"
#include "analysis/summary/event_rows.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"

namespace opmap::collector {

void ClickHouseStore::AppendEvents(const opmap::v1::Batch& b, const BatchCommit& commit,
                                   uint64_t flush, clickhouse_internal::SessionRows& out) const {
  if (commit.trace == nullptr || commit.mapping == nullptr) return;
  const analysis::EventRows built = analysis::BuildEventRows(*commit.trace, *commit.mapping);
  const std::vector<analysis::EventRow>& rows = built.rows;
  if (rows.empty()) return;
  const opmap::v1::Resource& res = b.resource();
  const clickhouse_internal::Labels labels = clickhouse_internal::SortedLabels(res);
  const uint32_t day = clickhouse_internal::CaptureDay(
      commit.has_session_window ? commit.session_window_start_ns : b.window_start_ns(),
      commit.has_session_window ? commit.session_window_end_ns : b.window_end_ns());
  clickhouse_internal::RowBinaryWriter& w = out.events;
  for (const analysis::EventRow& e : rows) {
    w.UInt32(day);
    w.String(b.agent_id());
    w.String(b.session_id());
    w.String(res.host());
    w.String(res.model_name());
    w.String(res.model_revision());
    w.ArrayString(labels.keys);
    w.ArrayString(labels.values);
    w.UInt8(static_cast<uint8_t>(e.kind));  // Enum8
    w.Int64(e.start_ns);
    w.Int64(e.start_ns + e.dur_ns);
    w.Int64(e.dur_ns);
    w.String(e.name);
    w.String(e.operator_name);
    w.String(e.layer_type);
    w.String(e.module);
    w.String(e.rule);
    w.Int32(e.device);
    w.Int64(e.stream);
    w.Int64(e.correlation);
    for (int32_t v : e.grid) w.Int32(v);
    for (int32_t v : e.block) w.Int32(v);
    w.UInt32(e.request);
    w.UInt64(flush);
  }
}

}  // namespace opmap::collector
