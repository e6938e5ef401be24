// A small blocking HTTP/1.1 client for ClickHouse's HTTP interface (port 8123): one
// request per call over a fresh or kept-alive TCP connection to 127.0.0.1-style
// endpoints, POST with the query in the URL (`?query=...&database=...`) and the data in
// the body, user/password as X-ClickHouse-User / X-ClickHouse-Key headers. ClickHouse
// 18.16 answers errors as 400/500 with the message in the body: they come back as
// absl::Status (UNAVAILABLE for connection failures and 5xx that mean "try another
// replica", INVALID_ARGUMENT / FAILED_PRECONDITION for 4xx) with the server's message.
//
// Thread-compatible: one client per thread, or external locking.
#ifndef OPMAP_COLLECTOR_CLICKHOUSE_HTTP_CLIENT_H_
#define OPMAP_COLLECTOR_CLICKHOUSE_HTTP_CLIENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::collector::clickhouse {

struct Endpoint {
  std::string host;  // numeric address or name
  uint16_t port = 8123;
};

struct ClientOptions {
  std::vector<Endpoint> endpoints;  // tried in order; a failed one is skipped next time
  std::string user = "default";
  std::string password;
  std::string database;             // sent as `database=`; empty: server default
  absl::Duration connect_timeout = absl::Seconds(2);
  absl::Duration request_timeout = absl::Seconds(30);
  // Extra settings sent as URL parameters on every request (e.g.
  // insert_distributed_sync=1).
  std::map<std::string, std::string> settings;
};

struct Response {
  int http_status = 0;
  std::string body;
  std::string endpoint;  // "host:port" that answered
};

class HttpClient {
 public:
  explicit HttpClient(ClientOptions options);

  // Runs `query` (a statement without data, e.g. CREATE, SELECT ... FORMAT TSV) and
  // returns the body on HTTP 200.
  absl::StatusOr<std::string> Query(std::string_view query);
  // INSERT with data: `insert` is "INSERT INTO t (cols) FORMAT RowBinary" (or TSV...),
  // `data` the rows. Returns only after HTTP 200: the block is durable on the replica
  // (and, with insert_distributed_sync=1, on the shards).
  absl::Status Insert(std::string_view insert, std::string_view data);
  // The raw call, for callers that need the status code.
  absl::StatusOr<Response> Post(std::string_view query, std::string_view body);

  const ClientOptions& options() const { return options_; }

 private:
  ClientOptions options_;
  size_t next_ = 0;  // endpoint to try first
};

// Parses "clickhouse://HOST:PORT[,HOST:PORT...]/DB?user=U&password=P&cluster=NAME" into
// options (+ the cluster name, empty when not given). InvalidArgument naming the part.
struct ClickHouseUrl {
  ClientOptions client;
  std::string cluster;
};
absl::StatusOr<ClickHouseUrl> ParseClickHouseUrl(std::string_view url);

// Escapes a string for a ClickHouse single-quoted literal ('...' with \\ and \').
std::string QuoteString(std::string_view s);

}  // namespace opmap::collector::clickhouse

#endif  // OPMAP_COLLECTOR_CLICKHOUSE_HTTP_CLIENT_H_
