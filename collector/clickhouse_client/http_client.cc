#include "collector/clickhouse_client/http_client.h"

#include <curl/curl.h>


#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/types/optional.h"
#include "common/base/absl_view.h"
#include "common/base/status_macros.h"

namespace opmap::collector::clickhouse_client {
namespace {

constexpr char kCodePayloadUrl[] = "opmap.clickhouse/code";
constexpr size_t kMaxErrorText = 4096;
constexpr size_t kMaxResponseBytes = size_t{1} << 30;

std::string EndpointName(const Endpoint& e) {
  // IPv6 literals need brackets to be read back as host:port.
  if (e.host.find(':') != std::string::npos) return absl::StrCat("[", e.host, "]:", e.port);
  return absl::StrCat(e.host, ":", e.port);
}

// RFC 3986 unreserved characters stay; everything else (spaces, quotes, '&', '=', UTF-8)
// is %XX so a query text can never end the parameter early. By libcurl, whose handle
// argument is ignored since 7.82 (Debian 12 ships 7.88). libcurl reads a length of 0 as
// "call strlen", hence the empty case here; it fails only when out of memory, which a
// std::string would have thrown for too (URL parameters are far below its int length).
std::string PercentEncode(std::string_view s) {
  if (s.empty()) return std::string();
  char* escaped = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  if (escaped == nullptr) throw std::bad_alloc();
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

// One libcurl handle per HttpClient (connections kept alive between calls). libcurl's
// global state is set up once, before any handle (curl_global_init is not thread-safe
// on every build).
void CurlGlobalInit() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  // Bounded like any answer we read: an error text, or a query's rows (RowBinary/TSV).
  if (body->size() + size * n > kMaxResponseBytes) return 0;  // libcurl: write error
  body->append(data, size * n);
  return size * n;
}

// A transfer that failed: what happened, for the failover log and the caller.
absl::Status CurlFailure(CURLcode code, const char* detail) {
  std::string what = detail[0] != '\0' ? detail : curl_easy_strerror(code);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(absl::StrCat("timed out: ", what));
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      return absl::UnavailableError(absl::StrCat("connection closed mid-response: ", what));
    case CURLE_WRITE_ERROR:
      return absl::ResourceExhaustedError(
          absl::StrCat("answer larger than ", kMaxResponseBytes, " bytes"));
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CONNECT_ERROR:
      return absl::UnavailableError(absl::StrCat("TLS: ", what));
    default:
      return absl::UnavailableError(what);
  }
}

// ClickHouse's "Code: N, e.displayText() = ..." number; -1 when absent.
int ParseErrorCode(std::string_view body) {
  size_t at = body.find("Code: ");
  if (at == std::string_view::npos) return -1;
  size_t end = at + 6;
  while (end < body.size() && absl::ascii_isdigit(static_cast<unsigned char>(body[end]))) ++end;
  int code = -1;
  if (!absl::SimpleAtoi(base::AbslView(body.substr(at + 6, end - at - 6)), &code)) return -1;
  return code;
}

// Errors that mean "this replica can't take it now; another may" (ZooKeeper session lost,
// replica read-only, a shard unreachable behind Distributed, overload). Numbers from
// ClickHouse 18.16's ErrorCodes.cpp.
bool IsRetryableCode(int code) {
  switch (code) {
    case 159:  // TIMEOUT_EXCEEDED
    case 198:  // DNS_ERROR
    case 202:  // TOO_MANY_SIMULTANEOUS_QUERIES
    case 209:  // SOCKET_TIMEOUT
    case 210:  // NETWORK_ERROR
    case 225:  // NO_ZOOKEEPER
    case 242:  // TABLE_IS_READ_ONLY (lost its ZooKeeper session)
    case 252:  // TOO_MANY_PARTS (merges behind: back off)
    case 279:  // ALL_CONNECTION_TRIES_FAILED
    case 285:  // TOO_FEW_LIVE_REPLICAS
    case 319:  // UNKNOWN_STATUS_OF_INSERT
    case 999:  // KEEPER_EXCEPTION
      return true;
    default:
      return false;
  }
}

absl::StatusCode CodeFor(int http_status, int ch_code) {
  if (IsRetryableCode(ch_code) || http_status == 502 || http_status == 503 ||
      http_status == 504) {
    return absl::StatusCode::kUnavailable;
  }
  switch (ch_code) {
    case 57:   // TABLE_ALREADY_EXISTS
    case 82:   // DATABASE_ALREADY_EXISTS
      return absl::StatusCode::kAlreadyExists;
    case 241:  // MEMORY_LIMIT_EXCEEDED
      return absl::StatusCode::kResourceExhausted;
    case 164:  // READONLY (user's profile)
    case 497:  // ACCESS_DENIED
      return absl::StatusCode::kPermissionDenied;
    default:
      break;
  }
  if (http_status == 401 || http_status == 403) return absl::StatusCode::kUnauthenticated;
  if (http_status == 404) return absl::StatusCode::kNotFound;  // unknown table/column/db
  // 400 (syntax) and the remaining 500s (unparsable data, type mismatch, ...): the same
  // request will fail the same way everywhere.
  return absl::StatusCode::kInvalidArgument;
}

absl::Status StatusFromResponse(const Response& r) {
  int ch_code = ParseErrorCode(r.body);
  absl::string_view text = absl::StripAsciiWhitespace(base::AbslView(r.body));
  if (text.size() > kMaxErrorText) text = text.substr(0, kMaxErrorText);
  absl::Status s(CodeFor(r.http_status, ch_code),
                 absl::StrCat("clickhouse ", r.endpoint, ": HTTP ", r.http_status, ": ",
                              text));
  if (ch_code >= 0) s.SetPayload(kCodePayloadUrl, absl::Cord(std::to_string(ch_code)));
  return s;
}

}  // namespace

int ClickHouseErrorCode(const absl::Status& status) {
  absl::optional<absl::Cord> p = status.GetPayload(kCodePayloadUrl);
  int code = -1;
  if (!p.has_value() || !absl::SimpleAtoi(std::string(*p), &code)) return -1;
  return code;
}

HttpClient::HttpClient(ClientOptions options) : options_(std::move(options)) {}

std::string HttpClient::Target(std::string_view query) const {
  std::vector<std::string> params;
  if (!query.empty()) params.push_back("query=" + PercentEncode(query));
  if (!options_.database.empty()) {
    params.push_back("database=" + PercentEncode(options_.database));
  }
  for (const auto& [k, v] : options_.settings) {
    params.push_back(PercentEncode(k) + "=" + PercentEncode(v));
  }
  return "/?" + absl::StrJoin(params, "&");
}

void HttpClient::CurlDeleter::operator()(void* handle) const {
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

absl::StatusOr<Response> HttpClient::PostTo(const Endpoint& ep, std::string_view target,
                                            std::string_view body) {
  if (curl_ == nullptr) {
    CurlGlobalInit();
    curl_.reset(curl_easy_init());
    if (curl_ == nullptr) return absl::InternalError("clickhouse: curl_easy_init failed");
  }
  CURL* h = static_cast<CURL*>(curl_.get());
  curl_easy_reset(h);  // options only: the connection cache stays
  const std::string url = absl::StrCat(options_.tls ? "https://" : "http://", EndpointName(ep),
                                       base::AbslView(target));
  struct Headers {
    curl_slist* list = nullptr;
    ~Headers() { curl_slist_free_all(list); }
    void Add(const std::string& h) { list = curl_slist_append(list, h.c_str()); }
  } headers;
  headers.Add("Content-Type: application/octet-stream");
  headers.Add("Expect:");  // no 100-continue round trip before the body
  headers.Add(absl::StrCat("X-ClickHouse-User: ", options_.user));
  if (!options_.password.empty()) headers.Add(absl::StrCat("X-ClickHouse-Key: ", options_.password));
  Response resp;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.request_timeout)));
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate when the server sends it
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, options_.tls ? "https" : "http");
  if (options_.tls) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  const CURLcode code = curl_easy_perform(h);
  // The handle must not keep pointers into this frame.
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) {
    long os_errno = 0;  // the system's reason (ECONNREFUSED, ...), which libcurl's text lacks
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    absl::Status failed = CurlFailure(code, error);
    if (os_errno == 0) return failed;
    return absl::Status(failed.code(), absl::StrCat(failed.message(), " (",
                                                    strerror(static_cast<int>(os_errno)), ")"));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  resp.http_status = static_cast<int>(status);
  resp.endpoint = EndpointName(ep);
  return resp;
}

absl::StatusOr<Response> HttpClient::Post(std::string_view query, std::string_view body) {
  const size_t n = options_.endpoints.size();
  if (n == 0) return absl::FailedPreconditionError("clickhouse: no endpoints configured");
  const std::string target = Target(query);
  std::vector<std::string> failures;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (next_ + k) % n;
    const Endpoint& ep = options_.endpoints[i];
    absl::StatusOr<Response> r = PostTo(ep, target, body);
    if (!r.ok()) {
      // Connection refused / reset / timeout: the statement may or may not have run there.
      // Moving on is safe for inserts (the same block is deduplicated) and for idempotent
      // DDL (IF NOT EXISTS); callers must not send anything else through failover.
      failures.push_back(absl::StrCat(EndpointName(ep), ": ", r.status().message()));
      continue;
    }
    if (r->http_status != 200) {
      absl::Status s = StatusFromResponse(*r);
      if (absl::IsUnavailable(s)) {
        failures.push_back(std::string(s.message()));
        continue;
      }
    }
    next_ = i;  // this endpoint answered: start here next time
    return r;
  }
  return absl::UnavailableError(absl::StrCat("clickhouse: all ", n, " endpoints failed: ",
                                             absl::StrJoin(failures, "; ")));
}

absl::StatusOr<std::string> HttpClient::Query(std::string_view query) {
  // The statement travels as the body: URLs are limited (Poco rejects long request lines)
  // and a store's queries can be long.
  ASSIGN_OR_RETURN(Response r, Post("", query));
  if (r.http_status != 200) return StatusFromResponse(r);
  return std::move(r.body);
}

absl::Status HttpClient::Insert(std::string_view insert, std::string_view data) {
  ASSIGN_OR_RETURN(Response r, Post(insert, data));
  if (r.http_status != 200) return StatusFromResponse(r);
  return absl::OkStatus();
}

}  // namespace opmap::collector::clickhouse_client
