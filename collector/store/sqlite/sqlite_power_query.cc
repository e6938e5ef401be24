// SqliteStore's Power query: the stored power rows (session_power) of the selected
// sessions and their "power ..." Unavailable entries, totalled by query_common::PowerTotals
// as the other engine does.
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/power_totals.h"
#include "collector/store/sqlite/sqlite_conditions.h"
#include "collector/store/sqlite/sqlite_query_internal.h"
#include "collector/store/sqlite/sqlite_store.h"

namespace opmap::collector {

absl::StatusOr<opmap::v1::PowerResponse> SqliteStore::QueryPower(
    const opmap::v1::PowerRequest& request) {
  ASSIGN_OR_RETURN(std::vector<query_common::PowerKey> keys, query_common::PlanPower(request));
  const size_t limit = request.limit() == 0 ? query_common::kDefaultPowerRows : request.limit();
  const SessionConditions c = Conditions(request.range(), request.filter());
  query_common::PowerTotals totals(std::move(keys));
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Transaction snapshot, sqlite::Transaction::BeginRead(db));
    {
      ASSIGN_OR_RETURN(
          sqlite::Statement st,
          db.Prepare(absl::StrFormat(
              "SELECT s.agent || '/' || s.session, s.host, s.revision, p.domain, p.device, "
              "p.name, p.gpu_index, p.start_ns, p.end_ns, p.covered_ns, p.energy_mj, p.method, "
              "p.reads, p.power_limit_mw, p.sm_clock_mhz, p.memory_clock_mhz, "
              "p.throttle_reasons, p.temperature_c, p.persistence, p.mig, p.compute_mode "
              "FROM sessions s CROSS JOIN session_power p ON p.session_id = s.id "
              "WHERE s.complete = 1%s",
              c.sql)));
      c.Bind(st);
      while (true) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        opmap::v1::PowerSample p;
        p.set_domain(static_cast<opmap::v1::PowerDomain>(st.Int(3)));
        p.set_device(std::string(st.Text(4)));
        p.set_name(std::string(st.Text(5)));
        p.set_index(static_cast<uint32_t>(st.Int(6)));
        p.set_start_ns(st.Int(7));
        p.set_end_ns(st.Int(8));
        p.set_covered_ns(st.Int(9));
        if (!st.IsNull(10)) p.set_energy_mj(static_cast<uint64_t>(st.Int(10)));
        p.set_method(static_cast<opmap::v1::EnergyMethod>(st.Int(11)));
        p.set_reads(static_cast<uint32_t>(st.Int(12)));
        if (!st.IsNull(13)) p.set_power_limit_mw(static_cast<uint32_t>(st.Int(13)));
        if (!st.IsNull(14)) p.set_sm_clock_mhz(static_cast<uint32_t>(st.Int(14)));
        if (!st.IsNull(15)) p.set_memory_clock_mhz(static_cast<uint32_t>(st.Int(15)));
        if (!st.IsNull(16)) p.set_throttle_reasons(static_cast<uint64_t>(st.Int(16)));
        if (!st.IsNull(17)) p.set_temperature_c(static_cast<uint32_t>(st.Int(17)));
        if (!st.IsNull(18)) p.set_persistence(st.Int(18) != 0);
        if (!st.IsNull(19)) p.set_mig(st.Int(19) != 0);
        if (!st.IsNull(20)) p.set_compute_mode(static_cast<int32_t>(st.Int(20)));
        totals.Add(st.Text(0), st.Text(1), st.Text(2), p);
      }
    }
    return query_internal::ScanUnavailable(
        db, c, limit, query_common::kPowerUnavailablePrefix,
        [&](std::string_view what, std::string_view reason) {
          totals.AddUnavailable(what, reason);
        });
  }));
  opmap::v1::PowerResponse response;
  RETURN_IF_ERROR(totals.Finish(
      request, [&] { return CountSessions(request.range(), request.filter()); }, response));
  return response;
}

}  // namespace opmap::collector
