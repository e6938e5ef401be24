// SqliteStore queries: latency percentiles, top kernels and the time breakdown over
// rollups, and the raw-batch scan for export. Every query selects sessions by range and
// filter (SessionConditions) and merges rollup rows in C++: each row's sketch is decoded
// once into its group's accumulator, so a query costs O(rows read), whatever the number
// of kernels behind them. Latency and top-kernel queries read pre-merged bucket rows
// for the buckets wholly inside the range and per-session rows for the other selected
// sessions (rollup_buckets.h): O(buckets + sessions in partial buckets), not O(sessions).
// The Counters query is in sqlite_counters_query.cc; helpers both files use are in
// sqlite_query_internal.h; planning and finishing, shared with the other engines, in
// query_common.h.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/modules.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "collector/store/query_common.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sketch_columns.h"
#include "collector/store/sqlite/sqlite_conditions.h"
#include "collector/store/sqlite/sqlite_query_internal.h"
#include "collector/store/sqlite/sqlite_store.h"
#include "common/base/saturating.h"

namespace opmap::collector {
namespace {

using opmap::v1::Filter;
using opmap::v1::TimeRange;
using stats::DDSketch;
using query_common::Accumulator;
using query_internal::AddRow;
using query_internal::kHostBit;
using query_internal::kKernelBit;
using query_internal::kLayerTypeBit;
using query_internal::kModuleBit;
using query_internal::kOperatorBit;
using query_internal::kRevisionBit;
using query_internal::kSessionBit;
using query_internal::RollupView;
using query_internal::ScanRollups;

using query_common::KeyColumn;

// `module_type` is ModuleTypeOf(v.module), computed once per row by the caller.
std::string_view Column(const RollupView& v, KeyColumn c, std::string_view module_type) {
  switch (c) {
    case KeyColumn::kHost: return v.host;
    case KeyColumn::kRevision: return v.revision;
    case KeyColumn::kLayerType: return v.layer_type;
    case KeyColumn::kOperator: return v.operator_name;
    case KeyColumn::kKernel: return v.kernel;
    case KeyColumn::kModule: return v.module;
    case KeyColumn::kModuleType: return module_type;
    case KeyColumn::kSession: return v.session;
  }
  return {};
}

uint32_t ColumnBit(KeyColumn c) {
  switch (c) {
    case KeyColumn::kHost: return kHostBit;
    case KeyColumn::kRevision: return kRevisionBit;
    case KeyColumn::kLayerType: return kLayerTypeBit;
    case KeyColumn::kOperator: return kOperatorBit;
    case KeyColumn::kKernel: return kKernelBit;
    case KeyColumn::kModule: return kModuleBit;
    case KeyColumn::kModuleType: return kModuleBit;
    case KeyColumn::kSession: return kSessionBit;
  }
  return 0;
}

}  // namespace

absl::StatusOr<opmap::v1::LatencyResponse> SqliteStore::QueryLatency(
    const opmap::v1::LatencyRequest& request) {
  opmap::v1::LatencyResponse response;
  ASSIGN_OR_RETURN(const query_common::LatencyPlan plan,
                   query_common::PlanLatency(request, response));
  // A grouping we can't do makes every row wrong: no rows, only the reason.
  if (response.unavailable_size() > 0) return response;
  const std::vector<KeyColumn>& columns = plan.columns;
  uint32_t key_columns = 0;
  for (KeyColumn c : columns) key_columns |= ColumnBit(c);
  const bool by_module_type =
      std::find(columns.begin(), columns.end(), KeyColumn::kModuleType) != columns.end();

  std::vector<query_common::LatencyGroup> groups;
  absl::flat_hash_map<std::string, size_t> index;
  std::string key;
  std::string module_type;
  // Bucket rows merge sessions: a session grouping reads per-session rows only.
  const RollupSelection selection =
      SelectRollups(request.range(), request.filter(), plan.by_session ? 0 : bucket_ns_);
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) {
    return ScanRollups(
        db, plan.subject, key_columns, selection,
        [&](const RollupView& v) -> absl::Status {
          // Rows stored before v4 have no module: left out (and named as unavailable).
          if (plan.by_module && v.module == kModuleNotCollected) return absl::OkStatus();
          if (by_module_type) module_type = analysis::ModuleTypeOf(v.module);
          key.clear();
          for (KeyColumn c : columns) query_common::AppendKeyPart(key, Column(v, c, module_type));
          auto [it, inserted] = index.try_emplace(key, groups.size());
          if (inserted) {
            query_common::LatencyGroup& g = groups.emplace_back();
            for (KeyColumn c : columns) g.key.emplace_back(Column(v, c, module_type));
            g.window_start_ns = v.window_start_ns;
            g.window_end_ns = v.window_end_ns;
          }
          query_common::LatencyGroup& g = groups[it->second];
          g.window_start_ns = std::min(g.window_start_ns, v.window_start_ns);
          g.window_end_ns = std::max(g.window_end_ns, v.window_end_ns);
          return AddRow(g.acc, v);
        });
  }));
  RETURN_IF_ERROR(query_common::FinishLatency(
      request, plan, std::move(groups),
      [&] { return CountSessions(request.range(), request.filter()); }, response));
  return response;
}

absl::StatusOr<SqliteStore::SessionCount> SqliteStore::CountSessions(
    const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter) {
  const SessionConditions c = Conditions(range, filter);
  SessionCount n;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat("SELECT count(*), coalesce(sum(s.host_rollup = 0), "
                                                "0), coalesce(sum(s.module_rollup = 0), 0) "
                                                "FROM sessions s WHERE s.complete = 1%s",
                                                c.sql)));
    c.Bind(st);
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) {
      n.complete = st.Int(0);
      n.before_v3 = st.Int(1);
      n.before_v4 = st.Int(2);
    }
    return absl::OkStatus();
  }));
  return n;
}

absl::StatusOr<opmap::v1::TopKernelsResponse> SqliteStore::QueryTopKernels(
    const opmap::v1::TopKernelsRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  std::vector<query_common::KernelGroup> kernels;
  absl::flat_hash_map<std::string, size_t> index;
  std::string name;  // reused: one allocation, not one per row
  int64_t total_ns = 0;
  const RollupSelection selection =
      SelectRollups(request.range(), request.filter(), bucket_ns_);
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) {
    return ScanRollups(
        db, analysis::RollupSubject::kKernel, kKernelBit | kLayerTypeBit, selection,
        [&](const RollupView& v) -> absl::Status {
          name.assign(v.kernel);
          auto [it, inserted] = index.try_emplace(name, kernels.size());
          if (inserted) kernels.emplace_back().name = name;
          query_common::KernelGroup& k = kernels[it->second];
          const analysis::LayerType type =
              analysis::ParseLayerType(v.layer_type).value_or(analysis::LayerType::kOther);
          base::AddSaturating(k.layer_time[static_cast<int>(type)], v.sum_ns);
          base::AddSaturating(total_ns, v.sum_ns);
          return AddRow(k.acc, v);
        });
  }));
  opmap::v1::TopKernelsResponse response;
  RETURN_IF_ERROR(
      query_common::FinishTopKernels(request, std::move(kernels), total_ns, response));
  return response;
}

absl::StatusOr<opmap::v1::TimeBreakdownResponse> SqliteStore::QueryTimeBreakdown(
    const opmap::v1::TimeBreakdownRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  const SessionConditions c = Conditions(request.range(), request.filter());
  query_common::DeviceTimes devices;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db.Prepare(absl::StrFormat(
            "SELECT s.host, d.device, d.gpu_uuid, d.gpu_name, d.span_ns, d.busy_ns, d.idle_ns, "
            "d.compute_ns, d.non_compute_ns, d.event_count FROM sessions s JOIN device_times d "
            "ON d.session_id = s.id WHERE s.complete = 1%s",
            c.sql)));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      devices.Add(st.Text(0), st.Int(1), st.Text(2), st.Text(3), st.Int(4), st.Int(5), st.Int(6),
                  st.Int(7), st.Int(8), st.Int(9));
    }
  }));
  opmap::v1::TimeBreakdownResponse response;
  devices.Finish(response);
  return response;
}

absl::Status SqliteStore::ForEachBatch(const opmap::v1::TimeRange& range,
                                       const opmap::v1::Filter& filter,
                                       const std::function<absl::Status(std::string_view)>& visit) {
  RETURN_IF_ERROR(ValidateRange(range));
  const SessionConditions c = Conditions(range, filter);
  // Row ids first, then one payload at a time without holding the lock during `visit`
  // (an export may be slow; ingest must not wait for it). A batch expired in between
  // is skipped.
  std::vector<int64_t> rowids;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat(
                         "SELECT b.rowid FROM sessions s JOIN batches b ON b.session_id = s.id "
                         "WHERE 1%s ORDER BY s.agent, s.session, b.seq",
                         c.sql)));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      rowids.push_back(st.Int(0));
    }
  }));
  std::string payload;
  for (int64_t rowid : rowids) {
    bool found = false;
    RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
      ASSIGN_OR_RETURN(sqlite::Statement st,
                       db.Prepare("SELECT payload FROM batches WHERE rowid = ?1"));
      st.BindInt(1, rowid);
      ASSIGN_OR_RETURN(found, st.Step());
      if (found) payload.assign(st.Blob(0));
      return absl::OkStatus();
    }));
    if (found) RETURN_IF_ERROR(visit(payload));
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector