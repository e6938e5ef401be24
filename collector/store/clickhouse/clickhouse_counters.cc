// ClickHouseStore: the Counters query and report sign-offs.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"

namespace opmap::collector {
namespace {

using clickhouse_client::QuoteString;
using clickhouse_internal::RowBinaryReader;

constexpr char kSignoffColumns[] =
    "report_sha256, kind, baseline, candidate, verdict, owner, role, signed_ns, principal";

absl::StatusOr<opmap::v1::Signoff> ReadSignoff(RowBinaryReader& r) {
  opmap::v1::Signoff s;
  std::string_view v;
  ASSIGN_OR_RETURN(v, r.String());
  s.set_report_sha256(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_kind(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_baseline(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_candidate(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_verdict(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_owner(std::string(v));
  ASSIGN_OR_RETURN(v, r.String());
  s.set_role(std::string(v));
  ASSIGN_OR_RETURN(const int64_t signed_ns, r.Int64());
  s.set_signed_ns(signed_ns);
  ASSIGN_OR_RETURN(v, r.String());
  s.set_principal(std::string(v));
  return s;
}

}  // namespace

absl::StatusOr<absl::flat_hash_map<std::string, ClickHouseStore::SessionInfo>>
ClickHouseStore::SelectSessionInfo(const opmap::v1::TimeRange& range,
                                   const opmap::v1::Filter& filter) {
  const std::string cond = clickhouse_internal::Conditions(range, filter);
  absl::flat_hash_map<std::string, SessionInfo> sessions;
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat("SELECT concat(agent, '/', session), any(host), any(revision), "
                            "toInt64(min(window_start_ns)), toInt64(max(window_end_ns)) "
                            "FROM %s WHERE 1%s GROUP BY agent, session FORMAT RowBinary",
                            Table("sessions"), cond)));
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(std::string_view name, r.String());
    SessionInfo info;
    ASSIGN_OR_RETURN(std::string_view host, r.String());
    ASSIGN_OR_RETURN(std::string_view revision, r.String());
    info.host = std::string(host);
    info.revision = std::string(revision);
    ASSIGN_OR_RETURN(info.window_start_ns, r.Int64());
    ASSIGN_OR_RETURN(info.window_end_ns, r.Int64());
    sessions.emplace(std::string(name), std::move(info));
  }
  return sessions;
}

absl::Status ClickHouseStore::ScanUnavailable(
    std::string_view selected, size_t limit, std::string_view what_prefix,
    const std::function<void(std::string_view, std::string_view)>& visit) {
  const std::string prefix =
      what_prefix.empty() ? std::string()
                          : absl::StrCat(" AND startsWith(what, ", QuoteString(what_prefix), ")");
  ASSIGN_OR_RETURN(const std::string body,
                   Query(absl::StrFormat("SELECT DISTINCT what, reason FROM %s WHERE %s%s "
                                         "ORDER BY what, reason LIMIT %d FORMAT RowBinary",
                                         Table("session_unavailable"), selected, prefix,
                                         limit + 1)));
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(std::string_view what, r.String());
    ASSIGN_OR_RETURN(std::string_view reason, r.String());
    visit(what, reason);
  }
  return absl::OkStatus();
}

absl::StatusOr<opmap::v1::CountersResponse> ClickHouseStore::QueryCounters(
    const opmap::v1::CountersRequest& request) {
  ASSIGN_OR_RETURN(std::vector<query_common::CounterKey> keys,
                   query_common::PlanCounters(request));
  const size_t limit =
      request.limit() == 0 ? query_common::kDefaultCounterRows : request.limit();
  const std::string selected = SessionSelection(request.range(), request.filter());
  ASSIGN_OR_RETURN(const auto sessions, SelectSessionInfo(request.range(), request.filter()));
  query_common::CounterTotals totals(std::move(keys));
  {
    // Ordered by session: CounterTotals counts a session when its rows begin. any(): one
    // row per key and session, whatever copies a store without deduplication holds.
    ASSIGN_OR_RETURN(
        const std::string body,
        Query(absl::StrFormat(
            "SELECT concat(agent, '/', session) AS s, name, source, pid, any(samples), "
            "any(value), any(time_enabled_ns), any(time_running_ns) FROM %s WHERE %s "
            "GROUP BY agent, session, name, source, pid ORDER BY s FORMAT RowBinary",
            Table("session_counters"), selected)));
    RowBinaryReader r(body);
    while (!r.done()) {
      ASSIGN_OR_RETURN(std::string_view session, r.String());
      ASSIGN_OR_RETURN(std::string_view name, r.String());
      ASSIGN_OR_RETURN(const int32_t source, r.Int32());
      ASSIGN_OR_RETURN(const int64_t pid, r.Int64());
      int64_t v[4];
      for (int64_t& x : v) {
        ASSIGN_OR_RETURN(x, r.Int64());
      }
      auto it = sessions.find(std::string(session));
      if (it == sessions.end()) continue;  // completed after the first read
      const SessionInfo& info = it->second;
      totals.AddCounter(session, info.host, info.revision, info.window_start_ns,
                        info.window_end_ns, name, source, pid, v[0], v[1], v[2], v[3]);
    }
  }
  {
    ASSIGN_OR_RETURN(
        const std::string body,
        Query(absl::StrFormat("SELECT stage, kind, reason, any(count) FROM %s WHERE %s "
                              "GROUP BY agent, session, stage, kind, reason FORMAT RowBinary",
                              Table("session_drops"), selected)));
    RowBinaryReader r(body);
    while (!r.done()) {
      ASSIGN_OR_RETURN(const int32_t stage, r.Int32());
      ASSIGN_OR_RETURN(const int32_t kind, r.Int32());
      ASSIGN_OR_RETURN(std::string_view reason, r.String());
      ASSIGN_OR_RETURN(const int64_t count, r.Int64());
      totals.AddDrop(stage, kind, reason, count);
    }
  }
  RETURN_IF_ERROR(ScanUnavailable(selected, limit, "",
                                  [&](std::string_view what, std::string_view reason) {
                                    totals.AddUnavailable(what, reason);
                                  }));
  opmap::v1::CountersResponse response;
  const query_common::SessionCount count{static_cast<int64_t>(sessions.size()), 0, 0};
  RETURN_IF_ERROR(totals.Finish(
      request, [&]() -> absl::StatusOr<query_common::SessionCount> { return count; }, response));
  return response;
}

absl::StatusOr<Store::SignoffOutcome> ClickHouseStore::RecordSignoff(
    const opmap::v1::Signoff& s) {
  const std::string key =
      absl::StrCat("report_sha256 = ", QuoteString(s.report_sha256()), " AND owner = ",
                   QuoteString(s.owner()), " AND role = ", QuoteString(s.role()));
  // The first record of (report, owner, role) wins: by signing time, then the other
  // columns, so every replica picks the same one if two were stored concurrently.
  const std::string first = absl::StrFormat(
      "SELECT %s FROM %s WHERE %s ORDER BY signed_ns, kind, baseline, candidate, verdict, "
      "principal LIMIT 1 FORMAT RowBinary",
      kSignoffColumns, Table("signoffs"), key);
  SignoffOutcome out;
  {
    ASSIGN_OR_RETURN(const std::string body, Query(first));
    if (!body.empty()) {
      RowBinaryReader r(body);
      ASSIGN_OR_RETURN(out.stored, ReadSignoff(r));
      out.already = true;
      return out;
    }
  }
  clickhouse_internal::RowBinaryWriter w;
  w.String(s.report_sha256());
  w.String(s.kind());
  w.String(s.baseline());
  w.String(s.candidate());
  w.String(s.verdict());
  w.String(s.owner());
  w.String(s.role());
  w.Int64(s.signed_ns());
  w.String(s.principal());
  RETURN_IF_ERROR(Insert("signoffs", kSignoffColumns, w.data()));
  ASSIGN_OR_RETURN(const std::string body, Query(first));
  if (body.empty()) return absl::InternalError("signoffs: the row just written is missing");
  RowBinaryReader r(body);
  ASSIGN_OR_RETURN(out.stored, ReadSignoff(r));
  // Another collector's concurrent record of the same key came first.
  out.already = out.stored.signed_ns() != s.signed_ns() || out.stored.kind() != s.kind() ||
                out.stored.verdict() != s.verdict() || out.stored.principal() != s.principal();
  return out;
}

absl::StatusOr<std::vector<opmap::v1::Signoff>> ClickHouseStore::ListSignoffs(
    const opmap::v1::ListSignoffsRequest& request) {
  // One record per (report, owner, role): the first, as RecordSignoff answers it.
  ASSIGN_OR_RETURN(
      const std::string body,
      Query(absl::StrFormat(
          "SELECT %1$s FROM (SELECT %1$s FROM %2$s WHERE kind = %3$s AND baseline = %4$s AND "
          "candidate = %5$s ORDER BY signed_ns, kind, baseline, candidate, verdict, principal "
          "LIMIT 1 BY report_sha256, owner, role) ORDER BY signed_ns, report_sha256, owner, role "
          "FORMAT RowBinary",
          kSignoffColumns, Table("signoffs"), QuoteString(request.kind()),
          QuoteString(request.baseline()), QuoteString(request.candidate()))));
  std::vector<opmap::v1::Signoff> out;
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(opmap::v1::Signoff s, ReadSignoff(r));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace opmap::collector
