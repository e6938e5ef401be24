#include "collector/metrics.h"
#include "common/metrics/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace opmap::collector {
namespace {

TEST(MetricsTest, PrometheusText) {
  CollectorMetrics m;
  m.batches += 3;
  m.records += 120;
  m.duplicates += 2;
  m.sessions_complete += 1;
  m.AddRejected(opmap::v1::REJECTION_CODE_INVALID_VALUE);
  m.AddRejected(opmap::v1::REJECTION_CODE_INVALID_VALUE);
  m.AddRejected(opmap::v1::REJECTION_CODE_TOO_LARGE);
  m.ObserveCommit(0.0003);   // first bucket
  m.ObserveCommit(0.003);    // le=0.005
  m.ObserveCommit(10.0);     // +Inf only
  std::string text = m.RenderPrometheus();
  for (const char* line : {
           "# TYPE opmap_collector_batches_total counter\nopmap_collector_batches_total 3\n",
           "\nopmap_collector_records_total 120\n",
           "\nopmap_collector_duplicates_total 2\n",
           "\nopmap_collector_sessions_complete_total 1\n",
           "# TYPE opmap_collector_rejected_total counter\n",
           "\nopmap_collector_rejected_total{code=\"invalid_value\"} 2\n",
           "\nopmap_collector_rejected_total{code=\"too_large\"} 1\n",
           "\nopmap_collector_rejected_total{code=\"string_table_gap\"} 0\n",
           "# TYPE opmap_collector_store_commit_seconds histogram\n",
           "\nopmap_collector_store_commit_seconds_bucket{le=\"0.0005\"} 1\n",
           "\nopmap_collector_store_commit_seconds_bucket{le=\"0.0025\"} 1\n",
           "\nopmap_collector_store_commit_seconds_bucket{le=\"0.005\"} 2\n",
           "\nopmap_collector_store_commit_seconds_bucket{le=\"2.5\"} 2\n",
           "\nopmap_collector_store_commit_seconds_bucket{le=\"+Inf\"} 3\n",
           "\nopmap_collector_store_commit_seconds_sum 10.0033\n",
           "\nopmap_collector_store_commit_seconds_count 3\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n--- in ---\n" << text;
  }
  EXPECT_EQ(text.find("unspecified"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
  // Every non-comment line is `name{labels} value`.
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    EXPECT_EQ(line.rfind("opmap_collector_", 0), 0u) << line;
    EXPECT_NE(line.find(' '), std::string::npos) << line;
  }
}

// Sends `request` to 127.0.0.1:port and returns the whole response.
std::string HttpGet(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

TEST(MetricsTest, HttpServer) {
  CollectorMetrics m;
  m.batches += 7;
  absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> server =
      metrics::MetricsServer::Start("127.0.0.1:0", [&] { return m.RenderPrometheus(); });
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ((*server)->address(), "127.0.0.1:" + std::to_string(port));

  std::string ok = HttpGet(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("\r\n\r\n# HELP opmap_collector_batches_total"), std::string::npos);
  EXPECT_NE(ok.find("\nopmap_collector_batches_total 7\n"), std::string::npos);
  size_t body = ok.find("\r\n\r\n") + 4;
  EXPECT_NE(ok.find("Content-Length: " + std::to_string(ok.size() - body) + "\r\n"),
            std::string::npos);

  std::string q = HttpGet(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(q.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  std::string missing = HttpGet(port, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << missing;
  std::string post = HttpGet(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << post;
  std::string junk = HttpGet(port, "garbage\r\n\r\n");
  EXPECT_EQ(junk.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << junk;

  (*server)->Stop();
  (*server)->Stop();  // idempotent
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_NE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);  // closed
  close(fd);
}

TEST(MetricsTest, BindErrors) {
  EXPECT_FALSE(metrics::MetricsServer::Start("127.0.0.1:x", [] { return ""; }).ok());
  absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> a =
      metrics::MetricsServer::Start("127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(a.ok());
  absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> b =
      metrics::MetricsServer::Start("127.0.0.1:" + std::to_string((*a)->port()), [] { return std::string(); });
  EXPECT_FALSE(b.ok());
}

}  // namespace
}  // namespace opmap::collector
