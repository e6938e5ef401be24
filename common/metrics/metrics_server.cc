#include "common/metrics/metrics_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/config/flag_config.h"

namespace opmap::metrics {

using Clock = std::chrono::steady_clock;

struct MetricsServer::Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string in;
  std::string out;  // non-empty once the request is answered
  size_t sent = 0;
};

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, std::function<std::string()> render) {
  std::string host;
  int port = 0;
  if (absl::Status s = config::SplitHostPort(address, &host, &port); !s.ok()) return s;
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
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0) {
      last_error = strerror(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
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

namespace {

std::string Response(const char* status, const char* content_type, std::string_view body,
                     bool head) {
  std::string out = absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                                 "\r\nContent-Length: ", body.size(),
                                 "\r\nConnection: close\r\n");
  if (std::strncmp(status, "405", 3) == 0) out += "Allow: GET, HEAD\r\n";
  out += "\r\n";
  if (!head) out.append(body.data(), body.size());
  return out;
}

bool RequestComplete(const std::string& in) {
  return in.find("\r\n\r\n") != std::string::npos || in.find("\n\n") != std::string::npos;
}

}  // namespace

std::string MetricsServer::Respond(const std::string& request) {
  if (!RequestComplete(request)) {
    return Response("431 Request Header Fields Too Large", "text/plain",
                    "request too large\n", false);
  }
  size_t eol = request.find_first_of("\r\n");
  std::string_view line(request.data(), eol == std::string::npos ? request.size() : eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    return Response("400 Bad Request", "text/plain", "bad request\n", false);
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (size_t q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    return Response("405 Method Not Allowed", "text/plain", "method not allowed\n", false);
  }
  if (path != "/metrics") {
    return Response("404 Not Found", "text/plain", "not found; try /metrics\n", head);
  }
  return Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_(), head);
}

void MetricsServer::Serve() {
  std::vector<Connection> connections;
  std::vector<pollfd> fds;
  for (;;) {
    const Clock::time_point now = Clock::now();
    // Past the deadline: closed, answered or not.
    connections.erase(std::remove_if(connections.begin(), connections.end(),
                                     [&](const Connection& c) {
                                       if (c.deadline > now) return false;
                                       close(c.fd);
                                       return true;
                                     }),
                      connections.end());
    int timeout_ms = -1;
    for (const Connection& c : connections) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now);
      timeout_ms = timeout_ms < 0 ? static_cast<int>(left.count() + 1)
                                  : std::min(timeout_ms, static_cast<int>(left.count() + 1));
    }
    fds.assign({{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}});
    for (const Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
    }
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (fds[1].revents != 0) break;
    // Serve the connections first (their fds are fds[2..]), then accept new ones.
    std::vector<bool> done(connections.size(), false);
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      const short revents = fds[i + 2].revents;
      if (revents == 0) continue;
      if (c.out.empty()) {
        char buf[2048];
        ssize_t got = recv(c.fd, buf, sizeof(buf), 0);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got <= 0) {
          done[i] = true;
          continue;
        }
        c.in.append(buf, static_cast<size_t>(got));
        if (RequestComplete(c.in) || c.in.size() >= kMaxRequestBytes) c.out = Respond(c.in);
        if (c.out.empty()) continue;
      }
      ssize_t put = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (put < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (put <= 0) {
        done[i] = true;
        continue;
      }
      c.sent += static_cast<size_t>(put);
      if (c.sent == c.out.size()) done[i] = true;
    }
    for (size_t i = connections.size(); i-- > 0;) {
      if (!done[i]) continue;
      close(connections[i].fd);
      connections.erase(connections.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (fds[0].revents & POLLIN) {
      for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        if (static_cast<int>(connections.size()) >= kMaxConnections) {
          std::string busy = Response("503 Service Unavailable", "text/plain", "busy\n", false);
          (void)!send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          close(fd);
          continue;
        }
        connections.push_back({fd, Clock::now() + kRequestDeadline, {}, {}, 0});
      }
    }
  }
  for (const Connection& c : connections) close(c.fd);
}

}  // namespace opmap::metrics
