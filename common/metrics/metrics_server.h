// A tiny HTTP/1.1 server for Prometheus scrapes, used by every daemon (the collector, the
// agent): `GET /metrics` (or HEAD) answers render(); other paths 404, other methods 405.
// The text comes from prometheus-cpp (prometheus_text.h); the server is our own because
// prometheus-cpp's (civetweb) gives each connection a thread and waits on slow clients.
//
// Why an event loop: a scraper is a peer like any other. One thread serves up to
// kMaxConnections connections at once without blocking on any of them, and each gets
// kRequestDeadline for the whole exchange (request in, response out): a client that
// sends one byte a second is closed at the deadline and never delays another scrape.
// Connections over the limit are answered 503 and closed.
#ifndef OPMAP_COMMON_METRICS_METRICS_SERVER_H_
#define OPMAP_COMMON_METRICS_METRICS_SERVER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace opmap::metrics {

class MetricsServer {
 public:
  static constexpr int kMaxConnections = 64;
  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr std::chrono::milliseconds kRequestDeadline{2000};

  // Binds `address` (HOST:PORT, port 0 = any) and serves `render()` from one thread.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, std::function<std::string()> render);
  ~MetricsServer();  // Stop()s
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  std::string address() const { return address_; }  // HOST:actual port
  // Stops accepting, closes every connection, joins the thread. Idempotent.
  void Stop();

 private:
  struct Connection;
  MetricsServer() = default;
  void Serve();
  // The response to a complete (or over-long) request.
  std::string Respond(const std::string& request);

  std::function<std::string()> render_;
  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;
  int port_ = 0;
  std::string address_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace opmap::metrics

#endif  // OPMAP_COMMON_METRICS_METRICS_SERVER_H_
