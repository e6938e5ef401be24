// A blocking client for ClickHouse's HTTP interface (port 8123, or 8443 over TLS), on
// libcurl: POST with the query in the URL (`?query=...&database=...&<settings>`) and the
// data in the body, user/password as X-ClickHouse-User / X-ClickHouse-Key headers (never
// in the URL, so never in a server's or proxy's access log). Connections are kept alive
// between calls; answers compressed by the server (enable_http_compression=1) are
// decompressed. With `tls`, https with the peer's certificate and host name verified
// against `ca_file` (or the system's CAs). Each endpoint gets connect_timeout to connect
// and request_timeout for the whole exchange.
//
// Failover: endpoints are tried in order starting from the last one that answered. A
// connection refused / reset / timeout, or an answer that means "this replica can't take it
// now" (ZooKeeper lost, table read-only, shard unreachable, too many parts, 502/503/504),
// moves on to the next; when all fail the call returns UNAVAILABLE listing each failure.
// A request that timed out may still have run on that endpoint: failover is safe for
// INSERTs (ReplicatedMergeTree drops the identical block) and idempotent DDL only.
//
// ClickHouse 18.16 answers errors as 4xx/5xx with "Code: N, e.displayText() = ..." in the
// body. They come back as absl::Status whose message carries the endpoint, the HTTP status
// and the server's text, with the ClickHouse code in a payload (ClickHouseErrorCode):
//   UNAVAILABLE        transport failures and the retryable codes above (after failover)
//   INVALID_ARGUMENT   400 (syntax) and 500s a retry can't fix (unparsable data, types)
//   NOT_FOUND          404 (unknown table, column, function, database, setting)
//   UNAUTHENTICATED    401 (unknown user, wrong password)
//   ALREADY_EXISTS, RESOURCE_EXHAUSTED, PERMISSION_DENIED for codes 57/82, 241, 164/497
//
// Thread-compatible: one client per thread, or external locking.
#ifndef OPMAP_COLLECTOR_CLICKHOUSE_CLIENT_HTTP_CLIENT_H_
#define OPMAP_COLLECTOR_CLICKHOUSE_CLIENT_HTTP_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::collector::clickhouse_client {

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
  bool tls = false;     // https; certificates always verified
  std::string ca_file;  // PEM CA bundle for the servers' certificates; empty: the system's
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
  // returns the body on HTTP 200. The statement is sent as the body (no URL length limit).
  absl::StatusOr<std::string> Query(std::string_view query);
  // INSERT with data: `insert` is "INSERT INTO t (cols) FORMAT RowBinary" (or TSV...),
  // `data` the rows. Returns only after HTTP 200: the block is durable on the replica
  // (and, with insert_distributed_sync=1, on the shards).
  absl::Status Insert(std::string_view insert, std::string_view data);
  // The raw call, for callers that need the status code: any HTTP answer that is not
  // retryable comes back as a Response (also 4xx/5xx); an empty `query` sends no
  // `query=` parameter, so the body is the statement.
  absl::StatusOr<Response> Post(std::string_view query, std::string_view body);

  const ClientOptions& options() const { return options_; }

 private:
  std::string Target(std::string_view query) const;  // "/?query=...&database=...&k=v"
  absl::StatusOr<Response> PostTo(const Endpoint& ep, std::string_view target,
                                  std::string_view body);

  struct CurlDeleter {
    void operator()(void* handle) const;
  };
  ClientOptions options_;
  size_t next_ = 0;  // endpoint to try first
  std::unique_ptr<void, CurlDeleter> curl_;  // CURL*, made at the first call
};

// Parses "clickhouse://HOST:PORT[,HOST:PORT...]/DB?user=U&password=P&cluster=NAME" into
// options (+ the cluster name, empty when not given). InvalidArgument naming the part; the
// password never appears in an error. Also accepted: connect_timeout_ms, request_timeout_ms,
// secure=1 (TLS; or the scheme clickhouse+https://) and ca=PATH (the CA bundle); a missing
// port means 8123 (8443 with TLS), an empty DB the server's default; values are %-decoded.
struct ClickHouseUrl {
  ClientOptions client;
  std::string cluster;
  // The rollup bucket width a store creates a new database with (0: no buckets);
  // -1: the store's default. An existing database keeps its own.
  int64_t rollup_bucket_ns = -1;
};
absl::StatusOr<ClickHouseUrl> ParseClickHouseUrl(std::string_view url);

// The ClickHouse error code ("Code: N") carried by a status from this client; -1 if none.
int ClickHouseErrorCode(const absl::Status& status);

// Escapes a string for a ClickHouse single-quoted literal ('...' with \\ and \').
std::string QuoteString(std::string_view s);

}  // namespace opmap::collector::clickhouse_client

#endif  // OPMAP_COLLECTOR_CLICKHOUSE_CLIENT_HTTP_CLIENT_H_
