// ClickHouseStore queries: latency percentiles, top kernels and the time breakdown over
// rollups, and the raw-batch scan for export. Selection and merging run in ClickHouse:
// rollup rows of the selected complete sessions are grouped server-side, their exact
// columns summed and their sketch bins merged with sumMap (bin index → count, exact
// integers), so one row per output group crosses the wire. The merged bins then go
// through the same accumulator and finishing code as SqliteStore's (query_common.h), so
// both engines give identical numbers, quantiles included.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "common/base/saturating.h"

namespace opmap::collector {
namespace clickhouse_internal {

std::string SaturatedSum(std::string_view expr) {
  return "toInt64(least(sum(toDecimal128(" + std::string(expr) +
         ", 0)), toDecimal128(9223372036854775807, 0)))";
}

std::string Conditions(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter) {
  using clickhouse_client::QuoteString;
  std::string sql;
  if (!(range.start_ns() == 0 && range.end_ns() == 0)) {
    // end 0 = still open.
    absl::StrAppend(&sql, " AND window_start_ns < ", range.end_ns(), " AND (window_end_ns > ",
                    range.start_ns(), " OR window_end_ns = 0)");
  }
  if (!filter.host().empty()) absl::StrAppend(&sql, " AND host = ", QuoteString(filter.host()));
  if (!filter.model().empty()) {
    absl::StrAppend(&sql, " AND model = ", QuoteString(filter.model()));
  }
  if (!filter.revision().empty()) {
    absl::StrAppend(&sql, " AND revision = ", QuoteString(filter.revision()));
  }
  for (const auto& [key, value] : filter.labels()) {
    absl::StrAppend(&sql, " AND arrayExists((k, v) -> k = ", QuoteString(key), " AND v = ",
                    QuoteString(value), ", label_keys, label_values)");
  }
  return sql;
}

}  // namespace clickhouse_internal

namespace {

using clickhouse_internal::RowBinaryReader;
using clickhouse_internal::SaturatedSum;
using query_common::Accumulator;
using query_common::KeyColumn;

// Reads one group's aggregates (SelectRollupGroups) into `acc`; false when the group had no row (an aggregate without
// GROUP BY answers one row even over nothing).
absl::StatusOr<bool> ReadAggregate(RowBinaryReader& r, Accumulator& acc,
                                   absl::FunctionRef<std::string()> what) {
  ASSIGN_OR_RETURN(const uint64_t rows, r.UInt64());
  ASSIGN_OR_RETURN(const int64_t count, r.Int64());
  ASSIGN_OR_RETURN(const int64_t sum_ns, r.Int64());
  ASSIGN_OR_RETURN(const int64_t min_ns, r.Int64());
  ASSIGN_OR_RETURN(const int64_t max_ns, r.Int64());
  ASSIGN_OR_RETURN(const int32_t min_scale, r.Int32());
  ASSIGN_OR_RETURN(const int32_t max_scale, r.Int32());
  ASSIGN_OR_RETURN(const std::vector<int64_t> keys, r.ArrayInt64());
  ASSIGN_OR_RETURN(const std::vector<uint64_t> values, r.ArrayUInt64());
  ASSIGN_OR_RETURN(const uint64_t zero, r.UInt64());
  ASSIGN_OR_RETURN(const double sum, r.Float64());
  ASSIGN_OR_RETURN(const double min, r.Float64());
  ASSIGN_OR_RETURN(const double max, r.Float64());
  if (rows == 0) return false;
  if (min_scale != max_scale) {
    return absl::DataLossError(absl::StrFormat(
        "rollups: stored sketch of %s: sketches of scales %d and %d can't be merged", what(),
        min_scale, max_scale));
  }
  if (keys.size() != values.size()) {
    return absl::DataLossError("rollups: merged bins: keys and counts differ in length");
  }
  // sumMap gives (index, count) sorted by index; the accumulator takes dense bins.
  std::vector<uint64_t> dense;
  const int64_t offset = keys.empty() ? 0 : keys.front();
  if (!keys.empty()) {
    const int64_t span = keys.back() - offset + 1;
    if (span <= 0 || span > (int64_t{1} << 18)) {
      return absl::DataLossError(absl::StrFormat("rollups: merged bins span %d indices", span));
    }
    dense.assign(static_cast<size_t>(span), 0);
    for (size_t i = 0; i < keys.size(); ++i) dense[keys[i] - offset] += values[i];
  }
  RETURN_IF_ERROR(acc.AddBins(count, sum_ns, min_ns, max_ns, min_scale, offset, dense, zero, sum,
                              min, max, what));
  return true;
}

const char* ColumnName(KeyColumn c) {
  switch (c) {
    case KeyColumn::kHost: return "host";
    case KeyColumn::kRevision: return "revision";
    case KeyColumn::kLayerType: return "layer_type";
    case KeyColumn::kOperator: return "operator";
    case KeyColumn::kKernel: return "kernel";
    case KeyColumn::kModule: return "module";
    case KeyColumn::kModuleType: return "module_type";
    case KeyColumn::kSession: return "agent, session";
  }
  return "''";
}

}  // namespace

std::string ClickHouseStore::ChosenCopies(std::string_view conditions) const {
  return absl::StrFormat(
      "SELECT agent, session, least_flush AS flush, its_bucketed AS bucketed, "
      "its_bucket_ns AS bucket_ns FROM (SELECT agent, session, min(flush) AS least_flush, "
      "argMin(bucketed, flush) AS its_bucketed, argMin(bucket_ns, flush) AS its_bucket_ns "
      "FROM %s WHERE 1%s GROUP BY agent, session)",
      Table("sessions"), conditions);
}

std::string ClickHouseStore::SessionSelection(const opmap::v1::TimeRange& range,
                                              const opmap::v1::Filter& filter,
                                              std::string_view extra) const {
  return absl::StrFormat("(agent, session, flush) %s (SELECT agent, session, flush FROM (%s) "
                         "WHERE 1%s)",
                         In(), ChosenCopies(clickhouse_internal::Conditions(range, filter)),
                         extra);
}

absl::StatusOr<query_common::SessionCount> ClickHouseStore::CountSessions(
    const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter) {
  ASSIGN_OR_RETURN(const std::string body,
                   Query(absl::StrFormat("SELECT uniqExact(agent, session) FROM %s WHERE 1%s "
                                         "FORMAT RowBinary",
                                         Table("sessions"),
                                         clickhouse_internal::Conditions(range, filter))));
  RowBinaryReader r(body);
  ASSIGN_OR_RETURN(const uint64_t n, r.UInt64());
  // Every session in a ClickHouse store was rolled up by this schema: none is missing
  // host subjects or modules.
  query_common::SessionCount count;
  count.complete = static_cast<int64_t>(n);
  return count;
}

absl::StatusOr<opmap::v1::LatencyResponse> ClickHouseStore::QueryLatency(
    const opmap::v1::LatencyRequest& request) {
  opmap::v1::LatencyResponse response;
  ASSIGN_OR_RETURN(const query_common::LatencyPlan plan,
                   query_common::PlanLatency(request, response));
  // A grouping we can't do makes every row wrong: no rows, only the reason.
  if (response.unavailable_size() > 0) return response;
  std::vector<std::string> keys;
  for (KeyColumn c : plan.columns) keys.push_back(ColumnName(c));
  // Bucket rows merge sessions: a session grouping reads per-session rows only.
  ASSIGN_OR_RETURN(const std::vector<std::string> bodies,
                   SelectRollupGroups(plan.subject, keys, request.range(), request.filter(),
                                      !plan.by_session));
  // Session windows, for a session grouping.
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> windows;
  if (plan.by_session) {
    ASSIGN_OR_RETURN(
        const std::string w,
        Query(absl::StrFormat("SELECT concat(agent, '/', session), toInt64(min(window_start_ns)), "
                              "toInt64(max(window_end_ns)) FROM %s WHERE 1%s GROUP BY agent, "
                              "session FORMAT RowBinary",
                              Table("sessions"),
                              clickhouse_internal::Conditions(request.range(), request.filter()))));
    RowBinaryReader r(w);
    while (!r.done()) {
      ASSIGN_OR_RETURN(std::string_view name, r.String());
      ASSIGN_OR_RETURN(const int64_t start, r.Int64());
      ASSIGN_OR_RETURN(const int64_t end, r.Int64());
      windows[std::string(name)] = {start, end};
    }
  }
  std::vector<query_common::LatencyGroup> groups;
  absl::flat_hash_map<std::string, size_t> index;  // a group from both bodies is one group
  std::vector<std::string> key;
  std::string joined;
  for (const std::string& body : bodies) {
    RowBinaryReader r(body);
    while (!r.done()) {
      key.clear();
      joined.clear();
      for (KeyColumn c : plan.columns) {
        ASSIGN_OR_RETURN(std::string_view part, r.String());
        if (c != KeyColumn::kSession) {
          key.emplace_back(part);
        } else {
          ASSIGN_OR_RETURN(std::string_view session, r.String());
          // As SqliteStore names a session: "agent/session".
          key.push_back(std::string(part) + "/" + std::string(session));
        }
        query_common::AppendKeyPart(joined, key.back());
      }
      auto [it, inserted] = index.try_emplace(joined, groups.size());
      query_common::LatencyGroup scratch;
      query_common::LatencyGroup& g = inserted ? scratch : groups[it->second];
      if (inserted) {
        g.key = key;
        if (plan.by_session) {
          auto w = windows.find(g.key.back());
          if (w != windows.end()) {
            g.window_start_ns = w->second.first;
            g.window_end_ns = w->second.second;
          }
        }
      }
      ASSIGN_OR_RETURN(const bool any, ReadAggregate(r, g.acc, [&] {
                         return absl::StrFormat("(%s)", absl::StrJoin(g.key, ", "));
                       }));
      if (!inserted) continue;
      if (any) {
        groups.push_back(std::move(scratch));
      } else {
        index.erase(it);
      }
    }
  }
  RETURN_IF_ERROR(query_common::FinishLatency(
      request, plan, std::move(groups),
      [&] { return CountSessions(request.range(), request.filter()); }, response));
  return response;
}

absl::StatusOr<opmap::v1::TopKernelsResponse> ClickHouseStore::QueryTopKernels(
    const opmap::v1::TopKernelsRequest& request) {
  RETURN_IF_ERROR(query_common::ValidateRange(request.range()));
  // Per (kernel, layer type): a kernel's row is typed by the layer type holding most of
  // its time, so the split comes back and is merged here.
  ASSIGN_OR_RETURN(const std::vector<std::string> bodies,
                   SelectRollupGroups(analysis::RollupSubject::kKernel, {"kernel", "layer_type"},
                                      request.range(), request.filter(), true));
  std::vector<query_common::KernelGroup> kernels;
  absl::flat_hash_map<std::string, size_t> index;
  int64_t total_ns = 0;
  for (const std::string& body : bodies) {
    RowBinaryReader r(body);
    while (!r.done()) {
      ASSIGN_OR_RETURN(std::string_view name, r.String());
      ASSIGN_OR_RETURN(std::string_view layer, r.String());
      auto [it, inserted] = index.try_emplace(std::string(name), kernels.size());
      if (inserted) kernels.emplace_back().name = std::string(name);
      query_common::KernelGroup& k = kernels[it->second];
      const int64_t before = k.acc.exact.sum_ns;
      ASSIGN_OR_RETURN(const bool any, ReadAggregate(r, k.acc, [&] {
                         return absl::StrFormat("(%s, %s)", layer, name);
                       }));
      if (!any) continue;
      const int64_t sum_ns = k.acc.exact.sum_ns - before;
      const analysis::LayerType type =
          analysis::ParseLayerType(layer).value_or(analysis::LayerType::kOther);
      base::AddSaturating(k.layer_time[static_cast<int>(type)], sum_ns);
      base::AddSaturating(total_ns, sum_ns);
    }
  }
  opmap::v1::TopKernelsResponse response;
  RETURN_IF_ERROR(query_common::FinishTopKernels(request, std::move(kernels), total_ns, response));
  return response;
}

absl::StatusOr<opmap::v1::TimeBreakdownResponse> ClickHouseStore::QueryTimeBreakdown(
    const opmap::v1::TimeBreakdownRequest& request) {
  RETURN_IF_ERROR(query_common::ValidateRange(request.range()));
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat(
          // Saturating sums (clickhouse_buckets.cc): Decimal128, clamped.
          "SELECT host, device, gpu_uuid, gpu_name, %s, %s, %s, %s, %s, %s FROM %s WHERE %s "
          "GROUP BY host, device, gpu_uuid, gpu_name "
          "ORDER BY host, device, gpu_uuid, gpu_name FORMAT RowBinary",
          SaturatedSum("span_ns"), SaturatedSum("busy_ns"), SaturatedSum("idle_ns"),
          SaturatedSum("compute_ns"), SaturatedSum("non_compute_ns"), SaturatedSum("event_count"),
          Table("device_times"), SessionSelection(request.range(), request.filter()))));
  query_common::DeviceTimes devices;
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(std::string_view host, r.String());
    ASSIGN_OR_RETURN(const int64_t device, r.Int64());
    ASSIGN_OR_RETURN(std::string_view uuid, r.String());
    ASSIGN_OR_RETURN(std::string_view name, r.String());
    int64_t v[6];
    for (int64_t& x : v) {
      ASSIGN_OR_RETURN(x, r.Int64());
    }
    devices.Add(host, device, uuid, name, v[0], v[1], v[2], v[3], v[4], v[5]);
  }
  opmap::v1::TimeBreakdownResponse response;
  devices.Finish(response);
  return response;
}

absl::Status ClickHouseStore::ForEachBatch(
    const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
    const std::function<absl::Status(std::string_view)>& visit) {
  RETURN_IF_ERROR(query_common::ValidateRange(range));
  const std::string cond = clickhouse_internal::Conditions(range, filter);
  // Complete sessions by their sessions row; open ones as SqliteStore keeps them: the
  // latest batch's resource and the hull of the batches' windows.
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat(
          "SELECT DISTINCT agent, session FROM ("
          "SELECT agent, session FROM %1$s WHERE 1%3$s UNION ALL "
          "SELECT agent, session FROM (SELECT agent, session, argMax(host, seq) AS host, "
          "argMax(model, seq) AS model, argMax(revision, seq) AS revision, "
          "argMax(label_keys, seq) AS label_keys, argMax(label_values, seq) AS label_values, "
          "minIf(window_start_ns, window_start_ns > 0) AS window_start_ns, "
          "max(window_end_ns) AS window_end_ns FROM %2$s GROUP BY agent, session) "
          "WHERE (agent, session) NOT IN (SELECT agent, session FROM %1$s)%3$s) "
          "ORDER BY agent, session FORMAT RowBinary",
          Table("sessions"), Table("batches"), cond)));
  std::vector<std::pair<std::string, std::string>> sessions;
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(std::string_view agent, r.String());
    ASSIGN_OR_RETURN(std::string_view session, r.String());
    sessions.emplace_back(agent, session);
  }
  // One session's payloads at a time: memory stays one session deep, and `visit` (an
  // export may be slow) holds no connection.
  for (const auto& [agent, session] : sessions) {
    ASSIGN_OR_RETURN(
        const std::string payloads,
        Query(absl::StrFormat("SELECT payload FROM %s WHERE %s ORDER BY seq LIMIT 1 BY seq "
                              "FORMAT RowBinary",
                              Table("batches"), clickhouse_internal::SessionKey(agent, session))));
    RowBinaryReader p(payloads);
    while (!p.done()) {
      ASSIGN_OR_RETURN(std::string_view payload, p.String());
      RETURN_IF_ERROR(visit(payload));
    }
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector
