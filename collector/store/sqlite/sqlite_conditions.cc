#include "collector/store/sqlite/sqlite_conditions.h"

#include "absl/strings/str_format.h"

namespace opmap::collector {

using opmap::v1::Filter;
using opmap::v1::TimeRange;

void AddRangeConditions(const TimeRange& range, SessionConditions& c) {
  if (!(range.start_ns() == 0 && range.end_ns() == 0)) {
    // end 0 = still open.
    c.sql += " AND s.window_start_ns < ? AND (s.window_end_ns > ? OR s.window_end_ns = 0)";
    c.params.emplace_back(range.end_ns());
    c.params.emplace_back(range.start_ns());
  }
}

void AddFilterConditions(const Filter& filter, SessionConditions& c) {
  if (!filter.host().empty()) {
    c.sql += " AND s.host = ?";
    c.params.emplace_back(std::string_view(filter.host()));
  }
  if (!filter.model().empty()) {
    c.sql += " AND s.model = ?";
    c.params.emplace_back(std::string_view(filter.model()));
  }
  if (!filter.revision().empty()) {
    c.sql += " AND s.revision = ?";
    c.params.emplace_back(std::string_view(filter.revision()));
  }
  for (const auto& [key, value] : filter.labels()) {
    c.sql += " AND EXISTS (SELECT 1 FROM json_each(s.labels_json) AS j "
             "WHERE j.key = ? AND j.value = ?)";
    c.params.emplace_back(std::string_view(key));
    c.params.emplace_back(std::string_view(value));
  }
}

SessionConditions Conditions(const TimeRange& range, const Filter& filter) {
  SessionConditions c;
  AddRangeConditions(range, c);
  AddFilterConditions(filter, c);
  return c;
}

RollupSelection SelectRollups(const TimeRange& range, const Filter& filter, int64_t width_ns) {
  RollupSelection sel;
  sel.covered = Covered(range, width_ns);
  AddRangeConditions(range, sel.sessions);
  if (sel.covered.all) {
    sel.sessions.sql += " AND s.bucket_ns IS NULL";
  } else if (sel.covered.any) {
    sel.sessions.sql += " AND (s.bucket_ns IS NULL OR s.bucket_ns < ? OR s.bucket_ns > ?)";
    sel.sessions.params.emplace_back(sel.covered.first);
    sel.sessions.params.emplace_back(sel.covered.last);
    sel.buckets.sql += " AND r.bucket_ns >= ? AND r.bucket_ns <= ?";
    sel.buckets.params.emplace_back(sel.covered.first);
    sel.buckets.params.emplace_back(sel.covered.last);
  }
  AddFilterConditions(filter, sel.sessions);
  AddFilterConditions(filter, sel.buckets);
  return sel;
}

}  // namespace opmap::collector
