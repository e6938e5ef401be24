// OpenStore: the one place that maps a store URL to an engine.
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/text/text_util.h"
#include "collector/clickhouse_client/http_client.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/sqlite/sqlite_store.h"
#include "collector/store/store.h"

namespace opmap::collector {

namespace {
constexpr std::string_view kSqlite = "sqlite:";
constexpr std::string_view kClickHouse = "clickhouse://";
}  // namespace

absl::Status CheckStoreUrl(std::string_view url) {
  if (url.starts_with(kSqlite)) {
    if (url.size() == kSqlite.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("store URL \"%s\": no path after \"sqlite:\"",
                          text::RedactPasswords(url)));
    }
    return absl::OkStatus();
  }
  if (url.starts_with(kClickHouse)) {
    absl::StatusOr<clickhouse_client::ClickHouseUrl> parsed = clickhouse_client::ParseClickHouseUrl(url);
    return parsed.ok() ? absl::OkStatus() : parsed.status();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "store URL \"%s\": unknown store scheme (expected \"sqlite:PATH\" or "
      "\"clickhouse://HOST:PORT[,HOST:PORT]/DB?user=U&cluster=NAME\")",
      text::RedactPasswords(url)));
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(std::string_view url) {
  RETURN_IF_ERROR(CheckStoreUrl(url));
  if (url.starts_with(kSqlite)) {
    ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
                     SqliteStore::Open(std::string(url.substr(kSqlite.size()))));
    return std::unique_ptr<Store>(std::move(store));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ClickHouseStore> store, ClickHouseStore::Open(url));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace opmap::collector
