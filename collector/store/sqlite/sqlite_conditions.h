// SQL conditions for the store's queries: a request's time range and filter as WHERE
// clauses on the sessions (or resources) table, and which rollup rows a query reads
// (rollup_buckets.h). Private to collector/store.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_CONDITIONS_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_CONDITIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "collector/store/query_common.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sqlite/sqlite_db.h"
#include "opmap/v1/query.pb.h"

namespace opmap::collector {

// SQL conditions on the sessions table (alias `s`) and their parameters, bound in order.
// Views point into the request, which outlives the statement.
struct SessionConditions {
  std::string sql;  // " AND ..." clauses
  std::vector<std::variant<int64_t, std::string_view>> params;

  void Bind(sqlite::Statement& st) const {
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const int64_t* v = std::get_if<int64_t>(&params[i])) {
        st.BindInt(index, *v);
      } else {
        st.BindText(index, std::get<std::string_view>(params[i]));
      }
    }
  }
};

// InvalidArgument unless the range is 0/0 (everything) or end > start (shared by engines).
using query_common::ValidateRange;

// Only the conditions that apply are generated, so the SQL text (and the cached
// statement) varies with which fields are set, not with their values.
// The range: overlap of the session's [window_start, window_end) with [start, end).
void AddRangeConditions(const opmap::v1::TimeRange& range, SessionConditions& c);
// The filter, on columns `s` has both as the sessions and as the resources table.
void AddFilterConditions(const opmap::v1::Filter& filter, SessionConditions& c);
// Both, on sessions.
SessionConditions Conditions(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter);

// What a rollup query reads: bucket rows (when `covered.any`) and the per-session rows
// of the selected sessions outside those buckets.
struct RollupSelection {
  CoveredBuckets covered;
  SessionConditions buckets;   // on resources `s` and rollup_buckets `r`
  SessionConditions sessions;  // on sessions `s`
};

RollupSelection SelectRollups(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
                              int64_t width_ns);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_CONDITIONS_H_
