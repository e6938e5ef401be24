// OpenStore: the one place that maps a store URL to an engine.
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "analysis/base/status_macros.h"
#include "collector/store/clickhouse_store.h"
#include "collector/store/sqlite_store.h"
#include "collector/store/store.h"

namespace opmap::collector {

absl::StatusOr<std::unique_ptr<Store>> OpenStore(std::string_view url) {
  constexpr std::string_view kSqlite = "sqlite:";
  constexpr std::string_view kClickHouse = "clickhouse://";
  if (url.starts_with(kSqlite)) {
    std::string path(url.substr(kSqlite.size()));
    if (path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("store URL \"%s\": no path after \"sqlite:\"", url));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(path));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (url.starts_with(kClickHouse)) {
    ASSIGN_OR_RETURN(std::unique_ptr<ClickHouseStore> store, ClickHouseStore::Open(url));
    return std::unique_ptr<Store>(std::move(store));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "store URL \"%s\": unknown store scheme (expected \"sqlite:PATH\" or "
      "\"clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&cluster=NAME\")",
      url));
}

}  // namespace opmap::collector
