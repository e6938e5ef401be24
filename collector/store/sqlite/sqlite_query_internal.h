// Helpers shared by SqliteStore's query files (sqlite_query.cc, sqlite_counters_query.cc):
// the rollup-row scan. What all engines share is in query_common.h. Private to
// collector/store.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_QUERY_INTERNAL_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_QUERY_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/rollup.h"
#include "collector/store/query_common.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sketch_columns.h"
#include "collector/store/sqlite/sqlite_conditions.h"
#include "collector/store/sqlite/sqlite_db.h"
#include "opmap/v1/query.pb.h"

namespace opmap::collector::query_internal {

// One stored rollup row; views valid during the callback only.
struct RollupView {
  std::string_view host, revision, layer_type, operator_name, kernel;
  int64_t count, sum_ns, min_ns, max_ns;
  StoredSketch sketch;
  std::string_view module;  // schema v4
  std::string_view session;  // "agent/session" (kSessionBit), else ""
  int64_t window_start_ns = 0, window_end_ns = 0;  // with kSessionBit, else 0
};

// Key columns a query reads; the others are selected as '' so SQLite does not decode them.
enum KeyColumnBit : uint32_t {
  kHostBit = 1, kRevisionBit = 2, kLayerTypeBit = 4, kOperatorBit = 8, kKernelBit = 16,
  kModuleBit = 32, kSessionBit = 64,
};

// Calls `visit(what, reason)` for the distinct Unavailable entries of the complete
// sessions `c` selects, ordered, at most `limit` + 1 (a caller sees when there are more);
// `what_prefix` non-empty: only entries whose `what` starts with it.
template <typename Visit>
absl::Status ScanUnavailable(sqlite::Database& db, const SessionConditions& c, size_t limit,
                             std::string_view what_prefix, Visit&& visit) {
  ASSIGN_OR_RETURN(
      sqlite::Statement st,
      db.Prepare(absl::StrFormat(
          "SELECT DISTINCT u.what, u.reason FROM sessions s CROSS JOIN session_unavailable u "
          "ON u.session_id = s.id WHERE s.complete = 1%s%s ORDER BY u.what, u.reason LIMIT %d",
          c.sql, what_prefix.empty() ? "" : " AND substr(u.what, 1, ?) = ?", limit + 1)));
  c.Bind(st);
  if (!what_prefix.empty()) {  // after the conditions' parameters
    const int next = static_cast<int>(c.params.size()) + 1;
    st.BindInt(next, static_cast<int64_t>(what_prefix.size()));
    st.BindText(next + 1, what_prefix);
  }
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    visit(st.Text(0), st.Text(1));
  }
  return absl::OkStatus();
}

// Calls `visit` for each selected rollup row of `subject`: bucket rows, then the rows of
// the complete sessions outside them (RollupSelection); the text columns not in
// `key_columns` (KeyColumnBit) are empty. kSessionBit needs a selection without buckets
// (bucket rows have no session).
template <typename Visit>
absl::Status ScanRollups(sqlite::Database& db, analysis::RollupSubject subject,
                         uint32_t key_columns, const RollupSelection& sel, Visit&& visit) {
  auto col = [&](KeyColumnBit bit, const char* name) {
    return (key_columns & bit) != 0 ? name : "''";
  };
  // The same columns from both tables; `s` is resources for buckets, sessions otherwise.
  // CROSS JOIN keeps `s` the outer loop (SQLite does not reorder it): the selected
  // sessions or resources, then their rows by primary-key prefix. Left to itself the
  // planner scans every rollup row and looks its session up.
  const std::string columns = absl::StrFormat(
      "%s, %s, %s, %s, %s, r.count, r.sum_ns, r.min_ns, r.max_ns, r.sketch_scale, "
      "r.sketch_offset, r.sketch_bins, r.sketch_zero, r.sketch_sum, r.sketch_min, "
      "r.sketch_max, %s, %s, %s, %s",
      col(kHostBit, "s.host"), col(kRevisionBit, "s.revision"),
      col(kLayerTypeBit, "r.layer_type"), col(kOperatorBit, "r.operator"),
      col(kKernelBit, "r.kernel"), col(kModuleBit, "r.module"),
      col(kSessionBit, "s.agent || '/' || s.session"), col(kSessionBit, "s.window_start_ns"),
      col(kSessionBit, "s.window_end_ns"));
  auto scan = [&](const std::string& sql, const SessionConditions& c) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st, db.Prepare(sql));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      RollupView v{st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4),
                   st.Int(5),  st.Int(6),  st.Int(7),  st.Int(8),
                   StoredSketch{static_cast<int>(st.Int(9)), static_cast<int32_t>(st.Int(10)),
                                st.Blob(11), static_cast<uint64_t>(st.Int(12)), st.Double(13),
                                st.Double(14), st.Double(15)},
                   st.Text(16), st.Text(17), st.Int(18), st.Int(19)};
      RETURN_IF_ERROR(visit(v));
    }
  };
  // One snapshot for both scans: a session completing in between is counted once or
  // not at all, never through its bucket and its own rows (ended by the guard).
  ASSIGN_OR_RETURN(sqlite::Transaction snapshot, sqlite::Transaction::BeginRead(db));
  if (sel.covered.any && (key_columns & kSessionBit) != 0) {
    return absl::InternalError("rollups: a session grouping read through buckets");
  }
  if (sel.covered.any) {
    RETURN_IF_ERROR(scan(absl::StrFormat("SELECT %s FROM resources s CROSS JOIN rollup_buckets r "
                                         "ON r.resource_id = s.id AND r.subject = %d WHERE 1%s",
                                         columns, static_cast<int>(subject), sel.buckets.sql),
                         sel.buckets));
  }
  return scan(absl::StrFormat("SELECT %s FROM sessions s CROSS JOIN rollups r ON r.session_id = s.id "
                              "AND r.subject = %d WHERE s.complete = 1%s",
                              columns, static_cast<int>(subject), sel.sessions.sql),
              sel.sessions);
}

// The group accumulator and the Unavailable entries are shared with the other engines.
using query_common::Accumulator;
using query_common::BeforeV3;
using query_common::kNoSessions;
using query_common::MakeUnavailable;

// Adds one scanned row to a group.
inline absl::Status AddRow(Accumulator& acc, const RollupView& v) {
  return acc.Add(v.count, v.sum_ns, v.min_ns, v.max_ns, v.sketch, [&] {
    return absl::StrFormat("(%s, %s, %s)", v.layer_type, v.operator_name, v.kernel);
  });
}

}  // namespace opmap::collector::query_internal

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_QUERY_INTERNAL_H_
