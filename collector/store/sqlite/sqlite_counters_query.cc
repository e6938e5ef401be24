// SqliteStore's Counters query: hardware-counter totals per (group_by key, counter) over
// the selected sessions, with their drop counts and the sessions' Unavailable entries
// (totalled and reported by query_common::CounterTotals, as the other engines do).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/sqlite/sqlite_conditions.h"
#include "collector/store/sqlite/sqlite_query_internal.h"
#include "collector/store/sqlite/sqlite_store.h"

namespace opmap::collector {
absl::StatusOr<opmap::v1::CountersResponse> SqliteStore::QueryCounters(
    const opmap::v1::CountersRequest& request) {
  ASSIGN_OR_RETURN(std::vector<query_common::CounterKey> keys,
                   query_common::PlanCounters(request));
  const size_t limit = request.limit() == 0 ? kDefaultCounterRows : request.limit();
  const SessionConditions c = Conditions(request.range(), request.filter());
  query_common::CounterTotals totals(std::move(keys));
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Transaction snapshot, sqlite::Transaction::BeginRead(db));
    {
      // Sessions outer (CROSS JOIN), each session's rows by primary key: a group meets
      // one session's rows together, so it counts each session once.
      ASSIGN_OR_RETURN(
          sqlite::Statement st,
          db.Prepare(absl::StrFormat(
              "SELECT s.id, s.host, s.revision, s.window_start_ns, s.window_end_ns, c.name, "
              "c.source, c.pid, c.samples, c.value, c.time_enabled_ns, c.time_running_ns "
              "FROM sessions s CROSS JOIN session_counters c ON c.session_id = s.id "
              "WHERE s.complete = 1%s",
              c.sql)));
      c.Bind(st);
      std::string session;
      while (true) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        session = absl::StrCat(st.Int(0));
        totals.AddCounter(session, st.Text(1), st.Text(2), st.Int(3), st.Int(4), st.Text(5),
                          static_cast<int>(st.Int(6)), st.Int(7), st.Int(8), st.Int(9),
                          st.Int(10), st.Int(11));
      }
    }
    {
      ASSIGN_OR_RETURN(sqlite::Statement st,
                       db.Prepare(absl::StrFormat(
                           "SELECT d.stage, d.kind, d.reason, d.count FROM sessions s CROSS JOIN "
                           "session_drops d ON d.session_id = s.id WHERE s.complete = 1%s",
                           c.sql)));
      c.Bind(st);
      while (true) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        totals.AddDrop(static_cast<int>(st.Int(0)), static_cast<int>(st.Int(1)), st.Text(2),
                       st.Int(3));
      }
    }
    return query_internal::ScanUnavailable(
        db, c, limit, "", [&](std::string_view what, std::string_view reason) {
          totals.AddUnavailable(what, reason);
        });
  }));
  opmap::v1::CountersResponse response;
  RETURN_IF_ERROR(totals.Finish(
      request, [&] { return CountSessions(request.range(), request.filter()); }, response));
  return response;
}

}  // namespace opmap::collector
