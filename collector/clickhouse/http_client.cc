#include "collector/clickhouse/http_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

namespace opmap::collector::clickhouse {
namespace {

constexpr char kCodePayloadUrl[] = "opmap.clickhouse/code";
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxErrorText = 4096;

std::string EndpointName(const Endpoint& e) {
  // IPv6 literals need brackets to be read back as host:port.
  if (e.host.find(':') != std::string::npos) return absl::StrCat("[", e.host, "]:", e.port);
  return absl::StrCat(e.host, ":", e.port);
}

// RFC 3986 unreserved characters stay; everything else (spaces, quotes, '&', '=', UTF-8)
// is %XX so a query text can never end the parameter early.
std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

int RemainingMs(absl::Time deadline) {
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

// Waits for `events` on fd until the deadline. DeadlineExceeded on timeout.
absl::Status WaitFor(int fd, short events, absl::Time deadline, std::string_view what) {
  while (true) {
    pollfd p{fd, events, 0};
    int ms = RemainingMs(deadline);
    if (ms == 0)
      return absl::DeadlineExceededError(absl::StrCat("timed out ", base::AbslView(what)));
    int n = poll(&p, 1, ms);
    if (n > 0) return absl::OkStatus();
    if (n == 0)
      return absl::DeadlineExceededError(absl::StrCat("timed out ", base::AbslView(what)));
    if (errno != EINTR) return absl::UnavailableError(absl::StrCat("poll: ", strerror(errno)));
  }
}

// Non-blocking connect to each resolved address in turn, bounded by connect_timeout.
absl::StatusOr<int> Connect(const Endpoint& ep, absl::Duration timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(ep.port);
  int rc = getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("resolve ", ep.host, ": ", gai_strerror(rc)));
  }
  absl::Status last = absl::UnavailableError("no address");
  absl::Time deadline = absl::Now() + timeout;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
    if (fd < 0) {
      last = absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
      continue;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = absl::UnavailableError(absl::StrCat("connect: ", strerror(errno)));
      close(fd);
      continue;
    }
    absl::Status w = WaitFor(fd, POLLOUT, deadline, "connecting");
    int err = 0;
    socklen_t len = sizeof(err);
    if (w.ok() && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      int one = 1;  // small requests: do not wait for Nagle
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      freeaddrinfo(res);
      return fd;
    }
    last = w.ok() ? absl::UnavailableError(absl::StrCat("connect: ", strerror(err)))
                  : absl::UnavailableError(w.message());
    close(fd);
  }
  freeaddrinfo(res);
  return last;
}

absl::Status SendAll(int fd, std::string_view data, absl::Time deadline) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);  // no SIGPIPE on reset
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      RETURN_IF_ERROR(WaitFor(fd, POLLOUT, deadline, "sending the request"));
      continue;
    }
    return absl::UnavailableError(absl::StrCat("send: ", strerror(errno)));
  }
  return absl::OkStatus();
}

// Buffered reads from the socket under one deadline.
class Reader {
 public:
  Reader(int fd, absl::Time deadline) : fd_(fd), deadline_(deadline) {}

  // Appends what arrives to buf_; false at EOF.
  absl::StatusOr<bool> More() {
    if (pos_ > (1 << 20) && pos_ * 2 > buf_.size()) {  // consumed bytes: drop, keep memory ~1x
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char chunk[64 * 1024];
    while (true) {
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buf_.append(chunk, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        RETURN_IF_ERROR(WaitFor(fd_, POLLIN, deadline_, "waiting for the response"));
        continue;
      }
      return absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
    }
  }
  // Makes at least n bytes available from pos_.
  absl::Status Need(size_t n) {
    while (buf_.size() - pos_ < n) {
      ASSIGN_OR_RETURN(bool more, More());
      if (!more) return absl::UnavailableError("connection closed mid-response");
    }
    return absl::OkStatus();
  }
  // One line ending in CRLF (without it).
  absl::StatusOr<std::string> Line() {
    while (true) {
      size_t eol = buf_.find("\r\n", pos_);
      if (eol != std::string::npos) {
        std::string line = buf_.substr(pos_, eol - pos_);
        pos_ = eol + 2;
        return line;
      }
      if (buf_.size() - pos_ > kMaxHeaderBytes) {
        return absl::UnavailableError("response line too long");
      }
      ASSIGN_OR_RETURN(bool more, More());
      if (!more) return absl::UnavailableError("connection closed mid-response");
    }
  }
  std::string Take(size_t n) {
    std::string out = buf_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  absl::StatusOr<std::string> Rest() {
    while (true) {
      ASSIGN_OR_RETURN(bool more, More());
      if (!more) break;
    }
    return Take(buf_.size() - pos_);
  }

 private:
  int fd_;
  absl::Time deadline_;
  std::string buf_;
  size_t pos_ = 0;
};

absl::StatusOr<std::string> ReadChunked(Reader& r) {
  std::string body;
  while (true) {
    ASSIGN_OR_RETURN(std::string line, r.Line());
    std::string_view hex(line);
    if (size_t semi = hex.find(';'); semi != std::string_view::npos) hex = hex.substr(0, semi);
    uint64_t size = 0;
    if (hex.empty() ||
        !absl::SimpleHexAtoi(absl::StripAsciiWhitespace(base::AbslView(hex)), &size)) {
      return absl::UnavailableError(absl::StrCat("bad chunk size '", line, "'"));
    }
    if (size == 0) break;
    RETURN_IF_ERROR(r.Need(size + 2));
    body += r.Take(size);
    r.Take(2);  // CRLF after the chunk
  }
  while (true) {  // trailers, up to the empty line
    ASSIGN_OR_RETURN(std::string trailer, r.Line());
    if (trailer.empty()) return body;
  }
}

// Status line, headers, body. Transport failures are UNAVAILABLE (the caller fails over).
absl::StatusOr<Response> ReadResponse(Reader& r) {
  ASSIGN_OR_RETURN(std::string status_line, r.Line());
  // "HTTP/1.1 200 OK"
  int code = 0;
  if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12 ||
      !absl::SimpleAtoi(absl::string_view(status_line).substr(9, 3), &code)) {
    return absl::UnavailableError(absl::StrCat("not an HTTP response: '", status_line, "'"));
  }
  std::optional<uint64_t> content_length;
  bool chunked = false;
  while (true) {
    ASSIGN_OR_RETURN(std::string h, r.Line());
    if (h.empty()) break;
    size_t colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(absl::string_view(h).substr(0, colon));
    absl::string_view value = absl::StripAsciiWhitespace(absl::string_view(h).substr(colon + 1));
    if (name == "content-length") {
      uint64_t n = 0;
      if (!absl::SimpleAtoi(value, &n)) {
        return absl::UnavailableError(absl::StrCat("bad Content-Length '", value, "'"));
      }
      content_length = n;
    } else if (name == "transfer-encoding") {
      chunked = absl::StrContains(absl::AsciiStrToLower(value), "chunked");
    }
  }
  Response resp;
  resp.http_status = code;
  if (chunked) {
    ASSIGN_OR_RETURN(resp.body, ReadChunked(r));
  } else if (content_length.has_value()) {
    RETURN_IF_ERROR(r.Need(*content_length));
    resp.body = r.Take(*content_length);
  } else {
    ASSIGN_OR_RETURN(resp.body, r.Rest());  // HTTP/1.0 style: body ends at close
  }
  return resp;
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

absl::StatusOr<Response> HttpClient::PostTo(const Endpoint& ep, std::string_view target,
                                            std::string_view body) const {
  ASSIGN_OR_RETURN(int raw_fd, Connect(ep, options_.connect_timeout));
  Fd fd(raw_fd);
  absl::Time deadline = absl::Now() + options_.request_timeout;
  std::string head =
      absl::StrCat("POST ", base::AbslView(target), " HTTP/1.1\r\nHost: ", EndpointName(ep),
                   "\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n"
                   "X-ClickHouse-User: ",
                   options_.user, "\r\n");
  if (!options_.password.empty()) {
    absl::StrAppend(&head, "X-ClickHouse-Key: ", options_.password, "\r\n");
  }
  absl::StrAppend(&head, "Content-Length: ", body.size(), "\r\n\r\n");
  RETURN_IF_ERROR(SendAll(fd.get(), head, deadline));
  RETURN_IF_ERROR(SendAll(fd.get(), body, deadline));
  Reader reader(fd.get(), deadline);
  ASSIGN_OR_RETURN(Response resp, ReadResponse(reader));
  resp.endpoint = EndpointName(ep);
  // Wait briefly for the server's FIN before closing: the side that closes first keeps
  // TIME_WAIT, and at thousands of inserts per second that must be the server, not the
  // collector's ephemeral ports.
  Reader drain(fd.get(), absl::Now() + absl::Milliseconds(50));
  (void)drain.Rest();
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

}  // namespace opmap::collector::clickhouse
