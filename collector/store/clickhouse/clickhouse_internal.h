// Helpers shared by ClickHouseStore's files. Private to collector/store.
#ifndef OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_INTERNAL_H_
#define OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "opmap/v1/query.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::collector::clickhouse_internal {

// Insert column lists, in the order RowBinary rows are written (clickhouse_schema.cc).
inline constexpr char kBatchColumns[] =
    "agent, session, seq, last, day, window_start_ns, window_end_ns, records, "
    "string_count_after, host, model, revision, label_keys, label_values, payload";

// The rows complete sessions add to each per-session table (clickhouse_rollup_insert.cc),
// one RowBinary body per table: a group commit appends every session it completes and
// sends each body as one INSERT (clickhouse_group_commit.cc).
struct SessionRows {
  clickhouse_internal::RowBinaryWriter rollups, device_times, counters, drops, unavailable, power, events,
      buckets, sessions;
};

inline constexpr char kEventColumns[] =
    "day, agent, session, host, model, revision, label_keys, label_values, kind, start_ns, "
    "end_ns, duration_ns, name, operator, layer_type, module, rule, device, stream, "
    "correlation, grid_x, grid_y, grid_z, block_x, block_y, block_z, request, flush";

// flush_buckets' columns (clickhouse_buckets.cc); rollup_buckets (v2) has all but flush.
inline constexpr char kBucketColumns[] =
    "subject, bucket_ns, model, revision, host, label_keys, label_values, layer_type, "
    "operator, kernel, module, module_type, sessions, count, sum_ns, min_ns, max_ns, "
    "sketch_scale_min, sketch_scale_max, sketch_bins, sketch_zero, sketch_sum, sketch_min, "
    "sketch_max, first_session, flush";

// A resource's labels sorted by key (proto maps have no order): equal label sets are
// equal bytes, as block deduplication needs.
struct Labels {
  std::vector<std::string> keys, values;
};
Labels SortedLabels(const opmap::v1::Resource& resource);

// "agent = '...' AND session = '...'".
std::string SessionKey(std::string_view agent, std::string_view session);

// The yyyymmdd (UTC) a batch's raw row is partitioned by: its capture window's start, or
// end when the start is unset; 19700101 when neither is set.
uint32_t CaptureDay(int64_t window_start_ns, int64_t window_end_ns);

// The start of the hull of two windows, 0 meaning unset (as SqliteStore keeps it).
int64_t HullStart(int64_t a, int64_t b);

// " AND ..." conditions of a range and filter on a relation with the columns host, model,
// revision, label_keys, label_values, window_start_ns and window_end_ns (the sessions
// table, or open sessions aggregated from batches). Same semantics as SQLite's
// (sqlite_conditions.h): overlap of [window_start, window_end) with the range, end 0 =
// still open.
std::string Conditions(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter);

// SQL for the sum of an Int64 expression that saturates at INT64_MAX, as the SQLite engine's
// sums do (common/base/saturating.h): ClickHouse's Int64 sum wraps silently, so the sum is
// taken as Decimal128 and clamped.
std::string SaturatedSum(std::string_view expr);

// session_power's columns, and one row of them after agent and session, before the flush:
// optional figures as Int64 with -1 for absent (clickhouse_power.cc).
inline constexpr char kPowerColumns[] =
    "agent, session, domain, device, name, gpu_index, start_ns, end_ns, covered_ns, energy_mj, "
    "method, reads, power_limit_mw, sm_clock_mhz, memory_clock_mhz, throttle_reasons, "
    "temperature_c, persistence, mig, compute_mode, flush";
void WritePowerRow(const opmap::v1::PowerSample& row, clickhouse_internal::RowBinaryWriter& w);

}  // namespace opmap::collector::clickhouse_internal

#endif  // OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_INTERNAL_H_
