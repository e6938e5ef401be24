// ClickHouseStore: the session_power rows (written with the session's rollup) and the
// Power query over them, totalled by query_common::PowerTotals as SQLite's is.
//
// Optional figures are Int64 columns holding -1 when absent: ClickHouse 18.16's
// Nullable columns cost a second file per column and every figure here is ≥ 0 when read
// (the throttle bits are validated below 2^63).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/power_totals.h"

namespace opmap::collector {
namespace {

using clickhouse_internal::RowBinaryReader;

constexpr int64_t kAbsent = -1;

}  // namespace

namespace clickhouse_internal {

void WritePowerRow(const opmap::v1::PowerSample& p, clickhouse_internal::RowBinaryWriter& w) {
  auto opt = [&](bool has, int64_t v) { w.Int64(has ? v : kAbsent); };
  w.Int32(p.domain());
  w.String(p.device());
  w.String(p.name());
  w.UInt32(p.index());
  w.Int64(p.start_ns());
  w.Int64(p.end_ns());
  w.Int64(p.covered_ns());
  opt(p.has_energy_mj(), static_cast<int64_t>(p.energy_mj()));
  w.Int32(p.method());
  w.UInt32(p.reads());
  opt(p.has_power_limit_mw(), p.power_limit_mw());
  opt(p.has_sm_clock_mhz(), p.sm_clock_mhz());
  opt(p.has_memory_clock_mhz(), p.memory_clock_mhz());
  opt(p.has_throttle_reasons(), static_cast<int64_t>(p.throttle_reasons()));
  opt(p.has_temperature_c(), p.temperature_c());
  opt(p.has_persistence(), p.persistence());
  opt(p.has_mig(), p.mig());
  opt(p.has_compute_mode(), p.compute_mode());
}

}  // namespace clickhouse_internal

absl::StatusOr<opmap::v1::PowerResponse> ClickHouseStore::QueryPower(
    const opmap::v1::PowerRequest& request) {
  ASSIGN_OR_RETURN(std::vector<query_common::PowerKey> keys, query_common::PlanPower(request));
  const size_t limit = request.limit() == 0 ? query_common::kDefaultPowerRows : request.limit();
  ASSIGN_OR_RETURN(const auto sessions, SelectSessionInfo(request.range(), request.filter()));
  const std::string selected = SessionSelection(request.range(), request.filter());
  query_common::PowerTotals totals(std::move(keys));
  {
    // LIMIT 1 BY: one row per (session, device), whatever copies a store without
    // deduplication holds.
    ASSIGN_OR_RETURN(
        const std::string body,
        Query(absl::StrFormat("SELECT concat(agent, '/', session), domain, device, name, "
                              "gpu_index, start_ns, end_ns, covered_ns, energy_mj, method, "
                              "reads, power_limit_mw, sm_clock_mhz, memory_clock_mhz, "
                              "throttle_reasons, temperature_c, persistence, mig, compute_mode "
                              "FROM %s WHERE %s LIMIT 1 BY agent, session, domain, device "
                              "FORMAT RowBinary",
                              Table("session_power"), selected)));
    RowBinaryReader r(body);
    while (!r.done()) {
      ASSIGN_OR_RETURN(std::string_view session, r.String());
      opmap::v1::PowerSample p;
      ASSIGN_OR_RETURN(const int32_t domain, r.Int32());
      p.set_domain(static_cast<opmap::v1::PowerDomain>(domain));
      ASSIGN_OR_RETURN(std::string_view device, r.String());
      p.set_device(std::string(device));
      ASSIGN_OR_RETURN(std::string_view name, r.String());
      p.set_name(std::string(name));
      ASSIGN_OR_RETURN(const uint32_t index, r.UInt32());
      p.set_index(index);
      int64_t times[3];
      for (int64_t& t : times) {
        ASSIGN_OR_RETURN(t, r.Int64());
      }
      p.set_start_ns(times[0]);
      p.set_end_ns(times[1]);
      p.set_covered_ns(times[2]);
      ASSIGN_OR_RETURN(const int64_t energy, r.Int64());
      if (energy != kAbsent) p.set_energy_mj(static_cast<uint64_t>(energy));
      ASSIGN_OR_RETURN(const int32_t method, r.Int32());
      p.set_method(static_cast<opmap::v1::EnergyMethod>(method));
      ASSIGN_OR_RETURN(const uint32_t reads, r.UInt32());
      p.set_reads(reads);
      int64_t v[8];
      for (int64_t& x : v) {
        ASSIGN_OR_RETURN(x, r.Int64());
      }
      if (v[0] != kAbsent) p.set_power_limit_mw(static_cast<uint32_t>(v[0]));
      if (v[1] != kAbsent) p.set_sm_clock_mhz(static_cast<uint32_t>(v[1]));
      if (v[2] != kAbsent) p.set_memory_clock_mhz(static_cast<uint32_t>(v[2]));
      if (v[3] != kAbsent) p.set_throttle_reasons(static_cast<uint64_t>(v[3]));
      if (v[4] != kAbsent) p.set_temperature_c(static_cast<uint32_t>(v[4]));
      if (v[5] != kAbsent) p.set_persistence(v[5] != 0);
      if (v[6] != kAbsent) p.set_mig(v[6] != 0);
      if (v[7] != kAbsent) p.set_compute_mode(static_cast<int32_t>(v[7]));
      auto it = sessions.find(std::string(session));
      if (it == sessions.end()) continue;  // completed after the first read
      totals.Add(session, it->second.host, it->second.revision, p);
    }
  }
  RETURN_IF_ERROR(ScanUnavailable(selected, limit, query_common::kPowerUnavailablePrefix,
                                  [&](std::string_view what, std::string_view reason) {
                                    totals.AddUnavailable(what, reason);
                                  }));
  opmap::v1::PowerResponse response;
  const query_common::SessionCount count{static_cast<int64_t>(sessions.size()), 0, 0};
  RETURN_IF_ERROR(totals.Finish(
      request, [&]() -> absl::StatusOr<query_common::SessionCount> { return count; }, response));
  return response;
}

}  // namespace opmap::collector
