#include "collector/store/power_totals.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/text/power_names.h"
#include "common/base/saturating.h"

namespace opmap::collector::query_common {
namespace {

template <typename T>
void KeepMin(bool has, T value, bool has_now, T now, void (opmap::v1::PowerRow::*set)(T),
             opmap::v1::PowerRow& row) {
  if (has) (row.*set)(has_now ? std::min(now, value) : value);
}
template <typename T>
void KeepMax(bool has, T value, bool has_now, T now, void (opmap::v1::PowerRow::*set)(T),
             opmap::v1::PowerRow& row) {
  if (has) (row.*set)(has_now ? std::max(now, value) : value);
}

using base::SaturatingAdd;

}  // namespace

std::string PowerModeText(const opmap::v1::PowerSample& row) {
  std::vector<std::string> parts;
  if (row.has_persistence()) parts.push_back(absl::StrCat("persistence=", row.persistence() ? "on" : "off"));
  if (row.has_mig()) parts.push_back(absl::StrCat("mig=", row.mig() ? "on" : "off"));
  if (row.has_compute_mode()) parts.push_back(absl::StrCat("compute=", text::ComputeModeName(row.compute_mode())));
  return absl::StrJoin(parts, " ");
}

absl::StatusOr<std::vector<PowerKey>> PlanPower(const opmap::v1::PowerRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  std::vector<PowerKey> keys;
  for (int i = 0; i < request.group_by_size(); ++i) {
    switch (request.group_by(i)) {
      case opmap::v1::GROUP_BY_HOST: keys.push_back(PowerKey::kHost); break;
      case opmap::v1::GROUP_BY_REVISION: keys.push_back(PowerKey::kRevision); break;
      case opmap::v1::GROUP_BY_SESSION: keys.push_back(PowerKey::kSession); break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "group_by[%d]: %s does not apply to Power (HOST, REVISION or SESSION)", i,
            opmap::v1::GroupBy_Name(request.group_by(i))));
    }
  }
  return keys;
}

void PowerTotals::Add(std::string_view session, std::string_view host, std::string_view revision,
                      const opmap::v1::PowerSample& s) {
  std::vector<std::string> parts;
  for (PowerKey k : keys_) {
    switch (k) {
      case PowerKey::kHost: parts.emplace_back(host); break;
      case PowerKey::kRevision: parts.emplace_back(revision); break;
      case PowerKey::kSession: parts.emplace_back(session); break;
    }
  }
  const size_t key_parts = parts.size();
  parts.emplace_back(host);
  parts.push_back(absl::StrCat(static_cast<int>(s.domain())));
  parts.push_back(s.device());
  auto [it, added] = groups_.try_emplace(parts);
  Group& g = it->second;
  opmap::v1::PowerRow& row = g.row;
  if (added) {
    for (size_t i = 0; i < key_parts; ++i) row.add_key(parts[i]);
    row.set_host(std::string(host));
    row.set_domain(s.domain());
    row.set_device(s.device());
    row.set_first_start_ns(s.start_ns());
    row.set_last_end_ns(s.end_ns());
  }
  if (s.end_ns() >= g.latest_end_ns) {
    g.latest_end_ns = s.end_ns();
    row.set_name(s.name());
  }
  row.set_first_start_ns(std::min(row.first_start_ns(), s.start_ns()));
  row.set_last_end_ns(std::max(row.last_end_ns(), s.end_ns()));
  row.set_windows(row.windows() + 1);
  if (s.has_energy_mj()) {
    row.set_windows_with_energy(row.windows_with_energy() + 1);
    row.set_energy_mj(SaturatingAdd(row.energy_mj(), s.energy_mj()));
    row.set_covered_ns(row.covered_ns() > std::numeric_limits<int64_t>::max() - s.covered_ns()
                           ? std::numeric_limits<int64_t>::max()
                           : row.covered_ns() + s.covered_ns());
    g.methods.insert(static_cast<int>(s.method()));
  }
  KeepMin(s.has_power_limit_mw(), s.power_limit_mw(), row.has_power_limit_min_mw(),
          row.power_limit_min_mw(), &opmap::v1::PowerRow::set_power_limit_min_mw, row);
  KeepMax(s.has_power_limit_mw(), s.power_limit_mw(), row.has_power_limit_max_mw(),
          row.power_limit_max_mw(), &opmap::v1::PowerRow::set_power_limit_max_mw, row);
  KeepMin(s.has_sm_clock_mhz(), s.sm_clock_mhz(), row.has_sm_clock_min_mhz(),
          row.sm_clock_min_mhz(), &opmap::v1::PowerRow::set_sm_clock_min_mhz, row);
  KeepMax(s.has_sm_clock_mhz(), s.sm_clock_mhz(), row.has_sm_clock_max_mhz(),
          row.sm_clock_max_mhz(), &opmap::v1::PowerRow::set_sm_clock_max_mhz, row);
  KeepMax(s.has_memory_clock_mhz(), s.memory_clock_mhz(), row.has_memory_clock_max_mhz(),
          row.memory_clock_max_mhz(), &opmap::v1::PowerRow::set_memory_clock_max_mhz, row);
  KeepMax(s.has_temperature_c(), s.temperature_c(), row.has_temperature_max_c(),
          row.temperature_max_c(), &opmap::v1::PowerRow::set_temperature_max_c, row);
  if (s.has_throttle_reasons()) row.set_throttle_reasons(row.throttle_reasons() | s.throttle_reasons());
  if (std::string mode = PowerModeText(s); !mode.empty()) g.modes.insert(std::move(mode));
}

void PowerTotals::AddUnavailable(std::string_view what, std::string_view reason) {
  unavailable_.emplace_back(what, reason);
}

absl::Status PowerTotals::Finish(const opmap::v1::PowerRequest& request,
                                 CountSessionsFn count_sessions,
                                 opmap::v1::PowerResponse& response) {
  const size_t limit = request.limit() == 0 ? kDefaultPowerRows : request.limit();
  std::sort(unavailable_.begin(), unavailable_.end());
  unavailable_.erase(std::unique(unavailable_.begin(), unavailable_.end()), unavailable_.end());
  size_t written = 0;
  for (auto& [key, g] : groups_) {  // map order: group key, host, domain, device
    if (written == limit) break;
    opmap::v1::PowerRow& row = g.row;
    if (row.windows_with_energy() > 0 && row.covered_ns() > 0) {
      row.set_average_w(static_cast<double>(row.energy_mj()) * 1e6 / row.covered_ns());
      row.set_method(g.methods.size() > 1 ? "mixed"
                     : *g.methods.begin() == opmap::v1::ENERGY_METHOD_COUNTER
                         ? "energy_counter"
                         : "integrated_power");
    }
    row.set_mode(absl::StrJoin(g.modes, " | "));
    *response.add_rows() = std::move(row);
    ++written;
  }
  bool truncated = groups_.size() > limit || unavailable_.size() > limit;
  for (size_t i = 0; i < unavailable_.size() && i < limit; ++i) {
    *response.add_unavailable() = MakeUnavailable(unavailable_[i].first, unavailable_[i].second);
  }
  response.set_truncated(truncated);
  ASSIGN_OR_RETURN(const SessionCount n, count_sessions());
  if (n.complete == 0) {
    *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
  } else if (groups_.empty()) {
    *response.add_unavailable() = MakeUnavailable(
        "rows", "the selected sessions carried no power rows (agents before power support, "
                "or power reads off or unavailable: see the entries above)");
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector::query_common
