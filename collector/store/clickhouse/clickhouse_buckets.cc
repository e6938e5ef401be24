// ClickHouseStore's pre-merged rollups (clickhouse_store.h, rollup_buckets.h): a complete
// session's rollup rows appended to its group's `flush_buckets` rows as aggregate states,
// and the selection every rollup query reads — bucket rows for the buckets wholly inside
// its range (of the flushes that count), per-session rows for the other selected sessions
// — so a query's cost follows the number of keys and buckets, not of sessions.
//
// The states are written in RowBinary as 18.16 serializes them: sum — the value; min/max
// — a has-value byte, then the value when set; sumMap — a varint count, then (key, value)
// pairs. Rows of count 0 and empty sketches write no min/max, so merging gives what the
// per-session query's minIf(..., count > 0) gives.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "analysis/summary/modules.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/rollup_buckets.h"

namespace opmap::collector {

using clickhouse_internal::RowBinaryReader;
using clickhouse_internal::RowBinaryWriter;
using clickhouse_internal::SaturatedSum;

namespace {


// One group's merged columns, the same layout from either source (ReadAggregate in
// clickhouse_query.cc reads them). Per-session rows: bin k of a row is index offset + k;
// 18.16's lambdas can't read other columns, so the offset comes in as a second array.
std::string SessionAggregates() {
  return absl::StrCat(
      "count(), toInt64(sum(count)), ", SaturatedSum("sum_ns"),
      ", toInt64(minIf(min_ns, count > 0)), "
      "toInt64(maxIf(max_ns, count > 0)), toInt32(min(sketch_scale)), toInt32(max(sketch_scale)), "
      "sumMap(arrayMap((i, o) -> toInt64(i) + o - 1, arrayEnumerate(sketch_bins), "
      "arrayResize(emptyArrayInt64(), length(sketch_bins), toInt64(sketch_offset))), sketch_bins), "
      "toUInt64(sum(sketch_zero)), toFloat64(sum(sketch_sum)), "
      "toFloat64(minIf(sketch_min, sketch_count > 0)), toFloat64(maxIf(sketch_max, sketch_count > 0))");
}
// A bucket's sum state is finalized per row and summed as the session rows' are. The
// state itself is an Int64 sum that ClickHouse's background merges may have wrapped past
// 2^63 (sessions of one bucket are each ≤ 2^62 ns): a negative one is taken as saturated.
// (Past 2^64 in one bucket row, five or more such sessions, it wraps to a positive value
// no query can tell from a true one.)
std::string BucketAggregates() {
  return absl::StrCat(
      "count(), toInt64(sumMerge(count)), ",
      SaturatedSum("if(finalizeAggregation(sum_ns) < 0, toInt64(9223372036854775807), "
                   "finalizeAggregation(sum_ns))"),
      ", toInt64(minMerge(min_ns)), "
      "toInt64(maxMerge(max_ns)), toInt32(minMerge(sketch_scale_min)), "
      "toInt32(maxMerge(sketch_scale_max)), sumMapMerge(sketch_bins), "
      "toUInt64(sumMerge(sketch_zero)), toFloat64(sumMerge(sketch_sum)), "
      "toFloat64(minMerge(sketch_min)), toFloat64(maxMerge(sketch_max))");
}

template <typename T>
void MinMaxState(RowBinaryWriter& w, bool has, T value) {
  w.UInt8(has ? 1 : 0);
  if (!has) return;
  if constexpr (std::is_same_v<T, int64_t>) w.Int64(value);
  if constexpr (std::is_same_v<T, int32_t>) w.Int32(value);
  if constexpr (std::is_same_v<T, double>) w.Float64(value);
}

}  // namespace

void ClickHouseStore::AppendBuckets(const opmap::v1::Batch& b, const analysis::SessionRollup& rollup,
                                    int64_t bucket_ns, uint64_t flush,
                                    clickhouse_internal::SessionRows& out) const {
  const opmap::v1::Resource& res = b.resource();
  const clickhouse_internal::Labels labels = clickhouse_internal::SortedLabels(res);
  // The first session merged into the row (any one, after merges: for reading the table by
  // hand).
  const std::string session = absl::StrCat(b.agent_id(), "/", b.session_id());
  RowBinaryWriter& w = out.buckets;
  for (const analysis::RollupRow& row : rollup.rows) {
    const stats::DDSketch& sk = row.sketch;
    w.UInt8(static_cast<uint8_t>(row.subject));
    w.Int64(bucket_ns);
    w.String(res.model_name());
    w.String(res.model_revision());
    w.String(res.host());
    w.ArrayString(labels.keys);
    w.ArrayString(labels.values);
    w.String(row.layer_type);
    w.String(row.operator_name);
    w.String(row.kernel_name);
    w.String(row.module);
    w.String(analysis::ModuleTypeOf(row.module));
    w.UInt64(1);
    w.Int64(row.count);
    w.Int64(row.sum_ns);
    MinMaxState(w, row.count > 0, row.min_ns);
    MinMaxState(w, row.count > 0, row.max_ns);
    MinMaxState(w, true, static_cast<int32_t>(sk.scale()));
    MinMaxState(w, true, static_cast<int32_t>(sk.scale()));
    const std::vector<uint64_t>& bins = sk.bins();
    uint64_t nonzero = 0;
    for (uint64_t c : bins) nonzero += c != 0;
    w.Varint(nonzero);
    for (size_t k = 0; k < bins.size(); ++k) {
      if (bins[k] == 0) continue;
      w.Int64(static_cast<int64_t>(sk.offset()) + static_cast<int64_t>(k));
      w.UInt64(bins[k]);
    }
    w.UInt64(sk.zero_count());
    w.Float64(sk.sum());
    MinMaxState(w, sk.count() > 0, sk.count() > 0 ? sk.min() : 0.0);
    MinMaxState(w, sk.count() > 0, sk.count() > 0 ? sk.max() : 0.0);
    w.String(session);
    w.UInt64(flush);
  }
}

absl::StatusOr<std::vector<std::string>> ClickHouseStore::SelectRollupGroups(
    analysis::RollupSubject subject, const std::vector<std::string>& keys,
    const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter, bool use_buckets) {
  std::vector<std::string> group_by = keys;
  std::sort(group_by.begin(), group_by.end());
  group_by.erase(std::unique(group_by.begin(), group_by.end()), group_by.end());
  const std::string select_keys = keys.empty() ? "" : absl::StrCat(absl::StrJoin(keys, ", "), ", ");
  const std::string grouping =
      group_by.empty() ? "" : absl::StrCat(" GROUP BY ", absl::StrJoin(group_by, ", "));
  const CoveredBuckets covered = Covered(range, use_buckets ? bucket_ns_ : 0);
  const std::string in_covered =
      covered.all || !covered.any ? ""
                                  : absl::StrFormat(" AND bucket_ns >= %d AND bucket_ns <= %d",
                                                    covered.first, covered.last);
  // The flushes whose bucket rows do not count, although their sessions rows are there:
  // one whose sessions rows did not all reach their shards, or one holding a copy of a
  // session that another flush's copy outranks (clickhouse_store.h "Exactly once").
  // Almost always none. A flush with no sessions row at all is left out by the bucket
  // query itself.
  const std::string bucketed_copies = absl::StrCat(" AND flush != 0 AND bucketed = 1", in_covered);
  std::string not_counted;  // " AND flush NOT IN (...)" or ""
  if (covered.any) {
    ASSIGN_OR_RETURN(
        const std::string body,
        Query(absl::StrFormat(
            "SELECT flush FROM %1$s WHERE flush %2$s (SELECT flush FROM %1$s WHERE 1%3$s) "
            "GROUP BY flush HAVING count() != any(flush_sessions) UNION ALL "
            "SELECT flush FROM %1$s WHERE 1%3$s AND (agent, session, flush) %4$s "
            "(SELECT agent, session, flush FROM (%5$s)) FORMAT RowBinary",
            Table("sessions"), In(), bucketed_copies, NotIn(), ChosenCopies(bucketed_copies))));
    std::vector<uint64_t> flushes;
    RowBinaryReader r(body);
    while (!r.done()) {
      ASSIGN_OR_RETURN(flushes.emplace_back(), r.UInt64());
    }
    if (!flushes.empty()) {
      not_counted = absl::StrCat(" AND flush NOT IN (", absl::StrJoin(flushes, ", "), ")");
    }
  }
  // Sessions bucketed into a covered bucket are read from the bucket rows only: those of
  // schema v2 (flush 0) from rollup_buckets, the others from their flush's rows.
  std::string not_covered;
  if (covered.any) {
    not_covered = absl::StrFormat(" AND NOT (bucketed = 1%s%s)", in_covered, not_counted);
  }
  std::vector<std::string> bodies;
  ASSIGN_OR_RETURN(
      bodies.emplace_back(),
      // PREWHERE: the selection first, then the sketch bins of the selected rows only
      // (18.16 does not move a GLOBAL IN there itself; reading every row's bins cost
      // 240 ms over 1000 sessions of which none was selected, 26 ms with it).
      Query(absl::StrFormat("SELECT %s%s FROM %s PREWHERE subject = %d AND %s%s FORMAT RowBinary",
                            select_keys, SessionAggregates(), Table("rollups"),
                            static_cast<int>(subject),
                            SessionSelection(range, filter, not_covered), grouping)));
  if (covered.any) {
    const std::string filter_conditions =
        clickhouse_internal::Conditions(opmap::v1::TimeRange(), filter);
    if (has_v2_buckets_) {
      ASSIGN_OR_RETURN(
          bodies.emplace_back(),
          Query(absl::StrFormat("SELECT %s%s FROM %s WHERE subject = %d%s%s%s FORMAT RowBinary",
                                select_keys, BucketAggregates(), Table("rollup_buckets"),
                                static_cast<int>(subject), in_covered, filter_conditions,
                                grouping)));
    }
    ASSIGN_OR_RETURN(
        bodies.emplace_back(),
        Query(absl::StrFormat(
            "SELECT %s%s FROM %s WHERE subject = %d%s%s AND flush %s (SELECT flush FROM %s "
            "WHERE 1%s)%s%s FORMAT RowBinary",
            select_keys, BucketAggregates(), Table("flush_buckets"), static_cast<int>(subject),
            in_covered, filter_conditions, In(), Table("sessions"), bucketed_copies, not_counted,
            grouping)));
  }
  return bodies;
}

}  // namespace opmap::collector
