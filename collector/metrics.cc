#include "collector/metrics.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collector/collector_config.h"

namespace opmap::collector {

std::string_view RejectionCodeLabel(opmap::v1::RejectionCode code) {
  switch (code) {
    case opmap::v1::REJECTION_CODE_INVALID_VALUE: return "invalid_value";
    case opmap::v1::REJECTION_CODE_COLUMN_LENGTH: return "column_length";
    case opmap::v1::REJECTION_CODE_UNKNOWN_STRING_ID: return "unknown_string_id";
    case opmap::v1::REJECTION_CODE_STRING_TABLE_GAP: return "string_table_gap";
    case opmap::v1::REJECTION_CODE_MISSING_IDENTITY: return "missing_identity";
    case opmap::v1::REJECTION_CODE_TOO_LARGE: return "too_large";
    default: return "unspecified";
  }
}

void CollectorMetrics::AddRejected(opmap::v1::RejectionCode code) {
  int i = static_cast<int>(code);
  if (i < 0 || i >= kRejectionCodes) i = 0;
  rejected_[i].fetch_add(1, std::memory_order_relaxed);
}

int64_t CollectorMetrics::rejected(opmap::v1::RejectionCode code) const {
  int i = static_cast<int>(code);
  if (i < 0 || i >= kRejectionCodes) i = 0;
  return rejected_[i].load(std::memory_order_relaxed);
}

void CollectorMetrics::ObserveCommit(double seconds) {
  size_t b = 0;
  while (b < kCommitBuckets.size() && seconds > kCommitBuckets[b]) ++b;
  commit_buckets_[b].fetch_add(1, std::memory_order_relaxed);
  commit_sum_ns_.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
  commit_count_.fetch_add(1, std::memory_order_relaxed);
}

std::string CollectorMetrics::RenderPrometheus() const {
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help,
                    const std::atomic<int64_t>& value) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name,
                    " ", value.load(std::memory_order_relaxed), "\n");
  };
  metric("opmap_collector_batches_total", "counter",
         "Batches stored durably (rejected batches are stored without their events).", batches);
  metric("opmap_collector_records_total", "counter",
         "Records (kernels, memory ops, launches, ranges) stored.", records);
  metric("opmap_collector_duplicates_total", "counter",
         "Batches dropped because their (agent, session, seq) was already stored.", duplicates);
  metric("opmap_collector_out_of_order_total", "counter",
         "Batches not stored because a lower seq of their session is missing.", out_of_order);
  metric("opmap_collector_sessions_complete_total", "counter",
         "Sessions whose last batch and rollup were stored.", sessions_complete);
  metric("opmap_collector_auth_failures_total", "counter",
         "Calls refused for a missing, unknown or insufficient token.", auth_failures);
  metric("opmap_collector_store_errors_total", "counter",
         "Store commits that failed (the stream ended UNAVAILABLE).", store_errors);
  metric("opmap_collector_ingest_streams", "gauge", "Open Ingest streams.", ingest_streams);
  metric("opmap_collector_active_sessions", "gauge", "Sessions held in memory.",
         active_sessions);

  absl::StrAppend(&out,
                  "# HELP opmap_collector_rejected_total Batches rejected as malformed, by "
                  "rejection code.\n# TYPE opmap_collector_rejected_total counter\n");
  for (int i = 1; i < kRejectionCodes; ++i) {
    absl::StrAppend(&out, "opmap_collector_rejected_total{code=\"",
                    std::string(RejectionCodeLabel(static_cast<opmap::v1::RejectionCode>(i))), "\"} ",
                    rejected_[i].load(std::memory_order_relaxed), "\n");
  }
  if (int64_t n = rejected_[0].load(std::memory_order_relaxed); n != 0) {
    absl::StrAppend(&out, "opmap_collector_rejected_total{code=\"unspecified\"} ", n, "\n");
  }

  absl::StrAppend(&out,
                  "# HELP opmap_collector_store_commit_seconds Time to commit one batch "
                  "durably.\n# TYPE opmap_collector_store_commit_seconds histogram\n");
  int64_t cumulative = 0;
  for (size_t b = 0; b <= kCommitBuckets.size(); ++b) {
    cumulative += commit_buckets_[b].load(std::memory_order_relaxed);
    std::string le = b < kCommitBuckets.size() ? absl::StrFormat("%g", kCommitBuckets[b]) : "+Inf";
    absl::StrAppend(&out, "opmap_collector_store_commit_seconds_bucket{le=\"", le, "\"} ",
                    cumulative, "\n");
  }
  absl::StrAppendFormat(&out, "opmap_collector_store_commit_seconds_sum %.9f\n",
                        commit_sum_ns_.load(std::memory_order_relaxed) / 1e9);
  absl::StrAppend(&out, "opmap_collector_store_commit_seconds_count ",
                  commit_count_.load(std::memory_order_relaxed), "\n");
  return out;
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, std::function<std::string()> render) {
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(address, &host, &port); !s.ok()) return s;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res); rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("metrics address %s: %s", address, gai_strerror(rc)));
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  std::string last_error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = strerror(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
      last_error = strerror(errno);
      close(fd);
      continue;
    }
    server->listen_fd_ = fd;
    break;
  }
  freeaddrinfo(res);
  if (server->listen_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot listen on %s for metrics: %s", address, last_error));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(server->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  server->port_ = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  bool v6 = host.find(':') != std::string::npos;
  server->address_ = absl::StrCat(v6 ? "[" : "", host, v6 ? "]" : "", ":", server->port_);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(server->listen_fd_);
    server->listen_fd_ = -1;
    return absl::InternalError(absl::StrFormat("pipe: %s", strerror(errno)));
  }
  server->wake_read_ = pipe_fds[0];
  server->wake_write_ = pipe_fds[1];
  server->render_ = std::move(render);
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::Stop() {
  if (stopped_.exchange(true)) return;
  if (wake_write_ >= 0) {
    char c = 'x';
    (void)!write(wake_write_, &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int* fd : {&listen_fd_, &wake_read_, &wake_write_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void MetricsServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      HandleConnection(fd);
      close(fd);
    }
  }
}

namespace {

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Response(const char* status, const char* content_type,
                     std::string_view body, bool head) {
  std::string out = absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                                 "\r\nContent-Length: ", body.size(),
                                 "\r\nConnection: close\r\n");
  if (std::strncmp(status, "405", 3) == 0) out += "Allow: GET, HEAD\r\n";
  out += "\r\n";
  if (!head) out.append(body.data(), body.size());
  return out;
}

}  // namespace

void MetricsServer::HandleConnection(int fd) {
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::string request;
  char buf[2048];
  while (request.size() < 8192 && request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  size_t eol = request.find_first_of("\r\n");
  std::string_view line(request.data(), eol == std::string::npos ? request.size() : eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    SendAll(fd, Response("400 Bad Request", "text/plain", "bad request\n", false));
    return;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (size_t q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  bool head = method == "HEAD";
  if (method != "GET" && !head) {
    SendAll(fd, Response("405 Method Not Allowed", "text/plain", "method not allowed\n", false));
  } else if (path != "/metrics") {
    SendAll(fd, Response("404 Not Found", "text/plain", "not found; try /metrics\n", head));
  } else {
    SendAll(fd, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_(), head));
  }
}

}  // namespace opmap::collector
