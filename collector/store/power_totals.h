// The Power query's part that every engine shares (as query_common.h is for the other
// queries): request planning, the per-(group, host, device) totals and the finishing
// steps, so SQLite and ClickHouse answer alike. An engine only selects stored rows
// (SessionTelemetry.power, one per session and device) and the sessions' "power ..."
// Unavailable entries. Private to collector/store.
#ifndef OPMAP_COLLECTOR_STORE_POWER_TOTALS_H_
#define OPMAP_COLLECTOR_STORE_POWER_TOTALS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/store/query_common.h"
#include "opmap/v1/query.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::collector::query_common {

enum class PowerKey { kHost, kRevision, kSession };
// Validates the range and group_by (HOST, REVISION, SESSION; InvalidArgument otherwise).
absl::StatusOr<std::vector<PowerKey>> PlanPower(const opmap::v1::PowerRequest& request);

inline constexpr uint32_t kDefaultPowerRows = 1000;
// The prefix of the Unavailable entries the Power query reports.
inline constexpr char kPowerUnavailablePrefix[] = "power";

class PowerTotals {
 public:
  explicit PowerTotals(std::vector<PowerKey> keys) : keys_(std::move(keys)) {}
  // One stored row: `session` is the session's store-wide id ("agent/session" for output).
  void Add(std::string_view session, std::string_view host, std::string_view revision,
           const opmap::v1::PowerSample& row);
  void AddUnavailable(std::string_view what, std::string_view reason);
  absl::Status Finish(const opmap::v1::PowerRequest& request, CountSessionsFn count_sessions,
                      opmap::v1::PowerResponse& response);

 private:
  struct Group {
    opmap::v1::PowerRow row;
    int64_t latest_end_ns = INT64_MIN;  // the window whose name the row shows
    std::set<int> methods;
    std::set<std::string> modes;
  };
  std::vector<PowerKey> keys_;
  std::map<std::vector<std::string>, Group> groups_;  // key parts + host + domain + device
  std::vector<std::pair<std::string, std::string>> unavailable_;
};

// "persistence=on mig=off compute=default" from the row's mode fields ("" when none).
std::string PowerModeText(const opmap::v1::PowerSample& row);

}  // namespace opmap::collector::query_common

#endif  // OPMAP_COLLECTOR_STORE_POWER_TOTALS_H_
