// SqliteStore's Counters query: hardware-counter totals per (group_by key, counter) over
// the selected sessions, with their drop counts and the sessions' Unavailable entries.
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
#include "analysis/base/status_macros.h"
#include "collector/store/sqlite_conditions.h"
#include "collector/store/sqlite_query_internal.h"
#include "collector/store/sqlite_store.h"

namespace opmap::collector {
namespace {

using query_internal::BeforeV3;
using query_internal::kNoSessions;
using query_internal::MakeUnavailable;

}  // namespace

absl::StatusOr<opmap::v1::CountersResponse> SqliteStore::QueryCounters(
    const opmap::v1::CountersRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  enum class Key { kHost, kRevision, kPid };
  std::vector<Key> keys;
  for (int i = 0; i < request.group_by_size(); ++i) {
    switch (request.group_by(i)) {
      case opmap::v1::GROUP_BY_HOST: keys.push_back(Key::kHost); break;
      case opmap::v1::GROUP_BY_REVISION: keys.push_back(Key::kRevision); break;
      case opmap::v1::GROUP_BY_PID: keys.push_back(Key::kPid); break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "group_by[%d]: %s does not apply to Counters (HOST, REVISION or PID)", i,
            opmap::v1::GroupBy_Name(request.group_by(i))));
    }
  }
  const size_t limit = request.limit() == 0 ? kDefaultCounterRows : request.limit();
  const SessionConditions c = Conditions(request.range(), request.filter());

  struct Group {
    std::vector<std::string> key;
    std::string name;
    int source = 0;
    int64_t samples = 0, value = 0, enabled = 0, running = 0;
    int64_t sessions = 0, window_ns = 0;
    int64_t last_session = -1;
  };
  std::vector<Group> groups;
  absl::flat_hash_map<std::string, size_t> index;
  std::map<std::tuple<int, int, std::string>, int64_t> drops;
  std::vector<std::pair<std::string, std::string>> unavailable;
  auto add_saturating = [](int64_t& total, int64_t v) {
    if (v > 0 && total > std::numeric_limits<int64_t>::max() - v) {
      total = std::numeric_limits<int64_t>::max();
    } else {
      total += v;
    }
  };
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Transaction snapshot, sqlite::Transaction::BeginRead(db));
    {
      // Sessions outer (CROSS JOIN), each session's rows by primary key: a group meets
      // one session's rows together, so `last_session` counts each session once.
      ASSIGN_OR_RETURN(
          sqlite::Statement st,
          db.Prepare(absl::StrFormat(
              "SELECT s.id, s.host, s.revision, s.window_start_ns, s.window_end_ns, c.name, "
              "c.source, c.pid, c.samples, c.value, c.time_enabled_ns, c.time_running_ns "
              "FROM sessions s CROSS JOIN session_counters c ON c.session_id = s.id "
              "WHERE s.complete = 1%s",
              c.sql)));
      c.Bind(st);
      std::string key;
      while (true) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        std::vector<std::string> parts;
        for (Key k : keys) {
          switch (k) {
            case Key::kHost: parts.emplace_back(st.Text(1)); break;
            case Key::kRevision: parts.emplace_back(st.Text(2)); break;
            case Key::kPid: parts.push_back(absl::StrCat(st.Int(7))); break;
          }
        }
        parts.emplace_back(st.Text(5));
        parts.push_back(absl::StrCat(st.Int(6)));
        key.clear();
        for (const std::string& p : parts) {
          const uint32_t n = static_cast<uint32_t>(p.size());
          key.append(reinterpret_cast<const char*>(&n), sizeof(n));
          key.append(p);
        }
        auto [it, inserted] = index.try_emplace(key, groups.size());
        if (inserted) {
          Group& g = groups.emplace_back();
          g.key.assign(parts.begin(), parts.begin() + static_cast<ptrdiff_t>(keys.size()));
          g.name = std::string(st.Text(5));
          g.source = static_cast<int>(st.Int(6));
        }
        Group& g = groups[it->second];
        const int64_t session = st.Int(0);
        if (session != g.last_session) {
          g.last_session = session;
          ++g.sessions;
          const int64_t start = st.Int(3), end = st.Int(4);
          if (start > 0 && end > start) g.window_ns += end - start;
        }
        g.samples += st.Int(8);
        add_saturating(g.value, st.Int(9));
        add_saturating(g.enabled, st.Int(10));
        add_saturating(g.running, st.Int(11));
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
        add_saturating(drops[{static_cast<int>(st.Int(0)), static_cast<int>(st.Int(1)),
                              std::string(st.Text(2))}],
                       st.Int(3));
      }
    }
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat(
                         "SELECT DISTINCT u.what, u.reason FROM sessions s CROSS JOIN "
                         "session_unavailable u ON u.session_id = s.id WHERE s.complete = 1%s "
                         "ORDER BY u.what, u.reason LIMIT %d",
                         c.sql, limit + 1)));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      unavailable.emplace_back(st.Text(0), st.Text(1));
    }
    return absl::OkStatus();
  }));

  opmap::v1::CountersResponse response;
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tie(a.key, a.name, a.source) < std::tie(b.key, b.name, b.source);
  });
  bool truncated = groups.size() > limit;
  for (size_t i = 0; i < groups.size() && i < limit; ++i) {
    const Group& g = groups[i];
    opmap::v1::CounterRow* row = response.add_rows();
    for (const std::string& k : g.key) row->add_key(k);
    row->set_name(g.name);
    row->set_source(g.source == opmap::v1::COUNTER_SOURCE_PAPI         ? "papi"
                    : g.source == opmap::v1::COUNTER_SOURCE_PERF_EVENT ? "perf_event"
                                                                       : "");
    row->set_value(g.value);
    row->set_time_enabled_ns(g.enabled);
    row->set_time_running_ns(g.running);
    row->set_samples(static_cast<uint64_t>(g.samples));
    row->set_sessions(static_cast<uint64_t>(g.sessions));
    if (g.running > 0) {
      // long double: value × enabled overflows neither the range nor (much) the precision.
      const long double scaled = static_cast<long double>(g.value) * g.enabled / g.running;
      row->set_scaled(static_cast<double>(scaled));
      if (g.window_ns > 0) row->set_per_second(static_cast<double>(scaled * 1e9L / g.window_ns));
    }
  }
  std::vector<std::pair<std::tuple<int, int, std::string>, int64_t>> sorted_drops(drops.begin(),
                                                                                  drops.end());
  std::stable_sort(sorted_drops.begin(), sorted_drops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  truncated = truncated || sorted_drops.size() > limit || unavailable.size() > limit;
  for (size_t i = 0; i < sorted_drops.size() && i < limit; ++i) {
    const auto& [key, count] = sorted_drops[i];
    opmap::v1::DropCount* d = response.add_drops();
    d->set_stage(static_cast<opmap::v1::DropStage>(std::get<0>(key)));
    d->set_kind(static_cast<opmap::v1::EventKind>(std::get<1>(key)));
    d->set_reason(std::get<2>(key));
    d->set_count(static_cast<uint64_t>(count));
  }
  for (size_t i = 0; i < unavailable.size() && i < limit; ++i) {
    *response.add_unavailable() = MakeUnavailable(unavailable[i].first, unavailable[i].second);
  }
  response.set_truncated(truncated);

  ASSIGN_OR_RETURN(const SessionCount n, CountSessions(request.range(), request.filter()));
  if (n.before_v3 > 0) *response.add_unavailable() = BeforeV3(n.before_v3);
  if (n.complete == 0) {
    *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
  } else if (groups.empty() && n.complete > n.before_v3) {
    *response.add_unavailable() =
        MakeUnavailable("rows", "the selected sessions carried no counter samples");
  }
  return response;
}

}  // namespace opmap::collector
