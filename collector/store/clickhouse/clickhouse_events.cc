// ClickHouseStore: a complete session's mapped events as rows of `events`
// (analysis/summary/event_rows.h), so analysts can ask ClickHouse their own questions in
// SQL (docs/scale-out.md). Written once, at the session's completion, before its sessions
// row: rows in BuildEventRows' fixed order, every value from the session's own batches
// (nothing from the receiving collector), so a repeat through any replica is the same
// bytes and block deduplication keeps the rows once. All rows of a session go to its
// capture day's partition, so retention drops whole sessions.
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
namespace {

constexpr char kEventColumns[] =
    "day, agent, session, host, model, revision, label_keys, label_values, kind, start_ns, "
    "end_ns, duration_ns, name, operator, layer_type, module, rule, device, stream, "
    "correlation, grid_x, grid_y, grid_z, block_x, block_y, block_z, request";

// Rows per INSERT: the server's own block size (max_insert_block_size), so a session of
// any size is cut into the blocks one INSERT would have made, and the collector never
// holds more than one block's bytes.
constexpr size_t kRowsPerInsert = 1'048'576;

}  // namespace

absl::Status ClickHouseStore::InsertEvents(const opmap::v1::Batch& b, const BatchCommit& commit) {
  if (commit.trace == nullptr || commit.mapping == nullptr) return absl::OkStatus();
  const analysis::EventRows built = analysis::BuildEventRows(*commit.trace, *commit.mapping);
  const std::vector<analysis::EventRow>& rows = built.rows;
  if (rows.empty()) return absl::OkStatus();
  const opmap::v1::Resource& res = b.resource();
  const clickhouse_internal::Labels labels = clickhouse_internal::SortedLabels(res);
  const uint32_t day = clickhouse_internal::CaptureDay(
      commit.has_session_window ? commit.session_window_start_ns : b.window_start_ns(),
      commit.has_session_window ? commit.session_window_end_ns : b.window_end_ns());
  for (size_t first = 0; first < rows.size(); first += kRowsPerInsert) {
    const size_t last = std::min(rows.size(), first + kRowsPerInsert);
    clickhouse::RowBinaryWriter w;
    for (size_t i = first; i < last; ++i) {
      const analysis::EventRow& e = rows[i];
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
    }
    RETURN_IF_ERROR(Insert("events", kEventColumns, w.data()));
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector
