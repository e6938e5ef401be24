// Collector self-metrics: atomic counters and a commit-latency histogram, rendered in
// the Prometheus text exposition format (0.0.4), and a tiny HTTP/1.1 server that answers
// `GET /metrics` with them (404 for other paths) on --metrics-listen.
#ifndef OPMAP_COLLECTOR_METRICS_H_
#define OPMAP_COLLECTOR_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "opmap/v1/ingest.pb.h"

namespace opmap::collector {

class CollectorMetrics {
 public:
  // Upper bounds (seconds) of the store-commit histogram buckets; +Inf is implicit.
  static constexpr std::array<double, 12> kCommitBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};
  static constexpr int kRejectionCodes = 7;  // RejectionCode values 0..6

  std::atomic<int64_t> batches{0};            // batches stored (incl. stored rejections)
  std::atomic<int64_t> records{0};            // records stored
  std::atomic<int64_t> duplicates{0};         // batches dropped as already stored
  std::atomic<int64_t> out_of_order{0};       // batches held back: a lower seq is missing
  std::atomic<int64_t> sessions_complete{0};
  std::atomic<int64_t> auth_failures{0};      // calls refused by the token check
  std::atomic<int64_t> store_errors{0};       // failed commits (streams ended UNAVAILABLE)
  std::atomic<int64_t> ingest_streams{0};     // open Ingest streams (gauge)
  std::atomic<int64_t> active_sessions{0};    // sessions held in memory (gauge)

  void AddRejected(opmap::v1::RejectionCode code);
  int64_t rejected(opmap::v1::RejectionCode code) const;
  void ObserveCommit(double seconds);

  std::string RenderPrometheus() const;

 private:
  std::array<std::atomic<int64_t>, kRejectionCodes> rejected_{};
  std::array<std::atomic<int64_t>, kCommitBuckets.size() + 1> commit_buckets_{};
  std::atomic<int64_t> commit_count_{0};
  std::atomic<int64_t> commit_sum_ns_{0};
};

// Lower-case label value of a rejection code: "invalid_value", "too_large", ...
std::string_view RejectionCodeLabel(opmap::v1::RejectionCode code);

class MetricsServer {
 public:
  // Binds `address` (HOST:PORT, port 0 = any) and serves `render()` on GET /metrics
  // from one background thread.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, std::function<std::string()> render);
  ~MetricsServer();  // Stop()s
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  std::string address() const { return address_; }  // HOST:actual port
  // Stops accepting, finishes the request in progress, joins the thread. Idempotent.
  void Stop();

 private:
  MetricsServer() = default;
  void Serve();
  void HandleConnection(int fd);

  std::function<std::string()> render_;
  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;
  int port_ = 0;
  std::string address_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_METRICS_H_
