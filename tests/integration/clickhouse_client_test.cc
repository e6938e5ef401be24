// The ClickHouse HTTP client without ClickHouse: the wire format (request line, headers,
// percent-encoding, Content-Length / chunked / close-delimited responses), error mapping,
// timeouts and endpoint failover against small fake HTTP servers on 127.0.0.1, plus
// ParseClickHouseUrl and QuoteString. The same client against the real cluster is in
// clickhouse_client_cluster_test.cc.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "collector/clickhouse_client/http_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::collector::clickhouse_client {
namespace {

// A listening socket on 127.0.0.1:0.
int Listen(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 16) != 0) {
    ADD_FAILURE() << "listen: " << strerror(errno);
    return -1;
  }
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// Answers one canned response per connection (in order) and records each request.
class FakeServer {
 public:
  explicit FakeServer(std::vector<std::string> responses) : responses_(std::move(responses)) {
    fd_ = Listen(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  Endpoint endpoint() const { return {"127.0.0.1", port_}; }
  // Valid once the server has answered them (the client call returned).
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    for (const std::string& response : responses_) {
      int c = -1;
      while (!stop_ && c < 0) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) c = accept(fd_, nullptr, nullptr);
      }
      if (c < 0) return;
      std::string req = ReadRequest(c);
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(req);
      }
      (void)!write(c, response.data(), response.size());
      close(c);
    }
  }
  static std::string ReadRequest(int c) {
    std::string req;
    char buf[4096];
    size_t need = std::string::npos;
    while (need == std::string::npos || req.size() < need) {
      ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
      size_t end = req.find("\r\n\r\n");
      if (need == std::string::npos && end != std::string::npos) {
        size_t cl = req.find("Content-Length: ");
        size_t len = 0;
        if (cl != std::string::npos) {
          std::string v = req.substr(cl + 16, req.find("\r\n", cl) - cl - 16);
          if (!absl::SimpleAtoi(v, &len)) len = 0;
        }
        need = end + 4 + len;
      }
    }
    return req;
  }

  std::vector<std::string> responses_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

std::string Ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}
std::string Error(int http, int code, const std::string& text) {
  std::string body = "Code: " + std::to_string(code) + ", e.displayText() = DB::Exception: " +
                     text + ", e.what() = DB::Exception\n";
  return "HTTP/1.1 " + std::to_string(http) + " Error\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

ClientOptions Opts(std::vector<Endpoint> eps) {
  ClientOptions o;
  o.endpoints = std::move(eps);
  o.connect_timeout = absl::Milliseconds(500);
  o.request_timeout = absl::Seconds(5);
  return o;
}

TEST(ClickHouseHttpTest, SendsHeadersEncodedQueryAndSettings) {
  FakeServer s({Ok("1\n"), Ok("")});
  ClientOptions o = Opts({s.endpoint()});
  o.user = "opmap";
  o.password = "p&ss";
  o.database = "prof";
  o.settings["insert_distributed_sync"] = "1";
  HttpClient client(o);
  absl::StatusOr<std::string> r = client.Query("SELECT 1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "1\n");
  const std::string data("\x03" "abc\0\x01", 6);  // binary, with a NUL
  ASSERT_TRUE(client.Insert("INSERT INTO t (a, b) FORMAT RowBinary", data).ok());

  std::vector<std::string> reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  // Query(): the statement is the body, no query= parameter.
  EXPECT_TRUE(absl::StartsWith(reqs[0], "POST /?database=prof&insert_distributed_sync=1 HTTP/1.1\r\n"))
      << reqs[0];
  EXPECT_TRUE(absl::StrContains(reqs[0], "\r\nX-ClickHouse-User: opmap\r\n"));
  EXPECT_TRUE(absl::StrContains(reqs[0], "\r\nX-ClickHouse-Key: p&ss\r\n"));
  EXPECT_TRUE(absl::EndsWith(reqs[0], "\r\n\r\nSELECT 1"));
  EXPECT_TRUE(absl::StartsWith(
      reqs[1], "POST /?query=INSERT%20INTO%20t%20%28a%2C%20b%29%20FORMAT%20RowBinary"
               "&database=prof&insert_distributed_sync=1 HTTP/1.1\r\n"))
      << reqs[1];
  EXPECT_TRUE(absl::EndsWith(reqs[1], "Content-Length: 6\r\n\r\n" + data));
}

TEST(ClickHouseHttpTest, ReadsChunkedAndCloseDelimitedBodies) {
  FakeServer s({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
                "HTTP/1.0 200 OK\r\n\r\nuntil close"});
  HttpClient client(Opts({s.endpoint()}));
  absl::StatusOr<std::string> a = client.Query("SELECT 1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, "hello world");
  absl::StatusOr<std::string> b = client.Query("SELECT 2");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, "until close");
}

TEST(ClickHouseHttpTest, TruncatedBodyIsUnavailable) {
  FakeServer s({"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"});
  HttpClient client(Opts({s.endpoint()}));
  absl::StatusOr<std::string> r = client.Query("SELECT 1");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "closed mid-response")) << r.status();
}

TEST(ClickHouseHttpTest, RetryableErrorFailsOverAndRemembersTheGoodEndpoint) {
  FakeServer first({Error(500, 242, "Table is in readonly mode")});
  FakeServer second({Ok("a"), Ok("b")});
  HttpClient client(Opts({first.endpoint(), second.endpoint()}));
  absl::StatusOr<Response> r = client.Post("", "SELECT 1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "a");
  EXPECT_EQ(r->endpoint, "127.0.0.1:" + std::to_string(second.port()));
  // The next call starts at the endpoint that answered: `first` sees no second request.
  r = client.Post("", "SELECT 2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "b");
  EXPECT_EQ(first.requests().size(), 1u);
}

TEST(ClickHouseHttpTest, NonRetryableErrorIsNotRetriedElsewhere) {
  FakeServer first({Error(400, 62, "Syntax error: failed at position 8")});
  FakeServer second({Ok("never")});
  HttpClient client(Opts({first.endpoint(), second.endpoint()}));
  absl::StatusOr<std::string> r = client.Query("SELECT FROM");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "Syntax error: failed at position 8"));
  EXPECT_TRUE(absl::StrContains(r.status().message(), "HTTP 400"));
  EXPECT_EQ(ClickHouseErrorCode(r.status()), 62);
  EXPECT_TRUE(second.requests().empty());
}

TEST(ClickHouseHttpTest, SilentServerTimesOutThenNextEndpointAnswers) {
  uint16_t hole_port = 0;
  int hole = Listen(&hole_port);  // accepts into the backlog, never answers
  FakeServer live({Ok("1\n")});
  ClientOptions o = Opts({{"127.0.0.1", hole_port}, live.endpoint()});
  o.request_timeout = absl::Milliseconds(300);
  HttpClient client(o);
  absl::Time t0 = absl::Now();
  absl::StatusOr<Response> r = client.Post("", "SELECT 1");
  absl::Duration took = absl::Now() - t0;
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->endpoint, "127.0.0.1:" + std::to_string(live.port()));
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(3));
  close(hole);
}

TEST(ClickHouseHttpTest, AllEndpointsDownIsUnavailableNamingEach) {
  uint16_t p1 = 0, p2 = 0;
  int a = Listen(&p1), b = Listen(&p2);
  close(a);  // nothing listens there any more: connection refused
  close(b);
  HttpClient client(Opts({{"127.0.0.1", p1}, {"127.0.0.1", p2}}));
  absl::Status s = client.Insert("INSERT INTO t FORMAT RowBinary", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "127.0.0.1:" + std::to_string(p1))) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "127.0.0.1:" + std::to_string(p2))) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "Connection refused")) << s;
  EXPECT_EQ(HttpClient(Opts({})).Query("SELECT 1").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ClickHouseUrlTest, TlsBySchemeOrSecureWithTheHttpsPortByDefault) {
  absl::StatusOr<ClickHouseUrl> u = ParseClickHouseUrl("clickhouse+https://ch1,ch2:9443/db?ca=/etc/ca.pem");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->client.tls);
  EXPECT_EQ(u->client.ca_file, "/etc/ca.pem");
  EXPECT_EQ(u->client.endpoints[0].port, 8443);  // ClickHouse's https_port
  EXPECT_EQ(u->client.endpoints[1].port, 9443);
  u = ParseClickHouseUrl("clickhouse://ch1/db?secure=1");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->client.tls);
  EXPECT_EQ(u->client.endpoints[0].port, 8443);
  u = ParseClickHouseUrl("clickhouse://ch1/db");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->client.tls);
  EXPECT_EQ(u->client.endpoints[0].port, 8123);
  EXPECT_THAT(ParseClickHouseUrl("clickhouse://ch1/db?ca=/x.pem").status().message(),
              ::testing::HasSubstr("ca= without TLS"));
  EXPECT_THAT(ParseClickHouseUrl("clickhouse://ch1/db?secure=yes").status().message(),
              ::testing::HasSubstr("secure 'yes' is not 0 or 1"));
}

TEST(ClickHouseUrlTest, ParsesHostsDatabaseAndParameters) {
  absl::StatusOr<ClickHouseUrl> u = ParseClickHouseUrl(
      "clickhouse://127.0.0.1:8123,ch2.example:18123,[::1]:9/opmap?user=svc&password=a%26b"
      "&cluster=opmap&request_timeout_ms=1500");
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_EQ(u->client.endpoints.size(), 3u);
  EXPECT_EQ(u->client.endpoints[0].host, "127.0.0.1");
  EXPECT_EQ(u->client.endpoints[0].port, 8123);
  EXPECT_EQ(u->client.endpoints[1].host, "ch2.example");
  EXPECT_EQ(u->client.endpoints[1].port, 18123);
  EXPECT_EQ(u->client.endpoints[2].host, "::1");
  EXPECT_EQ(u->client.endpoints[2].port, 9);
  EXPECT_EQ(u->client.database, "opmap");
  EXPECT_EQ(u->client.user, "svc");
  EXPECT_EQ(u->client.password, "a&b");
  EXPECT_EQ(u->cluster, "opmap");
  EXPECT_EQ(u->client.request_timeout, absl::Milliseconds(1500));

  absl::StatusOr<ClickHouseUrl> d = ParseClickHouseUrl("clickhouse://localhost");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->client.endpoints[0].port, 8123);  // default HTTP port
  EXPECT_EQ(d->client.database, "");
  EXPECT_EQ(d->client.user, "default");
  EXPECT_EQ(d->cluster, "");
}

TEST(ClickHouseUrlTest, BadUrlsNameThePart) {
  struct Case {
    const char* url;
    const char* mentions;
  } cases[] = {
      {"sqlite:///tmp/x.db", "scheme"},
      {"clickhouse:///db", "no HOST:PORT"},
      {"clickhouse://h:1,,h:2/db", "empty entry"},
      {"clickhouse://h:0/db", "port '0'"},
      {"clickhouse://h:99999/db", "port '99999'"},
      {"clickhouse://h:x/db", "port 'x'"},
      {"clickhouse://h:/db", "empty port"},
      {"clickhouse://:8123/db", "empty host"},
      {"clickhouse://[::1:8123/db", "closing ']'"},
      {"clickhouse://h:1/my-db", "database 'my-db'"},
      {"clickhouse://h:1/db?cluster=a;b", "cluster 'a;b'"},
      {"clickhouse://h:1/db?user=", "empty user"},
      {"clickhouse://h:1/db?usr=x", "unknown parameter 'usr'"},
      {"clickhouse://h:1/db?password=%zz", "bad %-escape"},
      {"clickhouse://h:1/db?request_timeout_ms=-5", "request_timeout_ms '-5'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ClickHouseUrl> u = ParseClickHouseUrl(c.url);
    EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument) << c.url;
    EXPECT_TRUE(absl::StrContains(u.status().message(), c.mentions))
        << c.url << " -> " << u.status();
  }
  // The password never reaches an error message (they are logged).
  absl::StatusOr<ClickHouseUrl> u =
      ParseClickHouseUrl("clickhouse://h:1/db?password=s3cret&bogus=1");
  EXPECT_FALSE(u.ok());
  EXPECT_FALSE(absl::StrContains(u.status().message(), "s3cret")) << u.status();
}

TEST(ClickHouseUrlTest, QuoteStringEscapesQuoteAndBackslash) {
  EXPECT_EQ(QuoteString("abc"), "'abc'");
  EXPECT_EQ(QuoteString("it's"), "'it\\'s'");
  EXPECT_EQ(QuoteString("a\\b"), "'a\\\\b'");
  EXPECT_EQ(QuoteString(""), "''");
}

}  // namespace
}  // namespace opmap::collector::clickhouse_client
