// The HTTP client against the real test cluster (scripts/clickhouse_cluster.sh): exactly
// once through a Distributed table over ReplicatedMergeTree (a resent block is dropped on
// any replica), a replica SIGKILLed mid-insert catching up, failover from a dead endpoint,
// and ClickHouse's own error text coming back in the status.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "collector/clickhouse_client/http_client.h"
#include "common/base/little_endian.h"
#include "gtest/gtest.h"
#include "tests/integration/clickhouse_cluster_fixture.h"

namespace opmap::collector::clickhouse_client {
namespace {

using ::opmap::testing::AcquireClickHouseCluster;
using ::opmap::testing::ClickHouseCluster;
using ::opmap::testing::UniqueTableName;

// RowBinary rows (agent String, seq UInt64, v UInt64): LEB128 length + bytes, then
// little-endian integers. The same arguments always give the same bytes, which is what
// block deduplication needs.
using ::opmap::base::PutU64LE;
std::string Block(uint64_t first_seq, int rows, bool reversed = false) {
  std::string out;
  for (int i = 0; i < rows; ++i) {
    uint64_t seq = first_seq + static_cast<uint64_t>(reversed ? rows - 1 - i : i);
    std::string agent = absl::StrCat("agent-", seq % 16);
    out.push_back(static_cast<char>(agent.size()));  // < 128: one LEB128 byte
    out += agent;
    PutU64LE(&out, seq);
    PutU64LE(&out, seq * 7);
  }
  return out;
}

int64_t Count(HttpClient& c, const std::string& sql) {
  absl::StatusOr<std::string> r = c.Query(sql + " FORMAT TSV");
  int64_t n = -1;
  if (!r.ok()) {
    ADD_FAILURE() << sql << ": " << r.status();
    return -1;
  }
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*r), &n)) {
    ADD_FAILURE() << sql << ": '" << *r << "'";
  }
  return n;
}

class ClickHouseClusterTest : public ::testing::Test {
 protected:
  // One cluster for the suite (started here when OPMAP_CLICKHOUSE_ENV is unset).
  static void SetUpTestSuite() {
    *shared() = AcquireClickHouseCluster();
    if (shared()->ok()) PrintStart(***shared());
  }
  static void PrintStart(const ClickHouseCluster& c) {
    if (c.owned() && c.start_ms() >= 0) {
      std::cout << "[measure] cluster start: " << c.start_ms() << " ms\n";
    }
  }
  static void TearDownTestSuite() { *shared() = absl::UnknownError("released"); }
  static absl::StatusOr<std::unique_ptr<ClickHouseCluster>>* shared() {
    static auto* c = new absl::StatusOr<std::unique_ptr<ClickHouseCluster>>(
        absl::UnknownError("not acquired"));
    return c;
  }

  void SetUp() override {
    if (fresh_) {
      acquired_ = AcquireClickHouseCluster(/*fresh=*/true);
      if (acquired_.ok()) PrintStart(**acquired_);
    }
    absl::StatusOr<std::unique_ptr<ClickHouseCluster>>& got = fresh_ ? acquired_ : *shared();
    OPMAP_REQUIRE_CLICKHOUSE(got);
    cluster_ = got->get();
  }
  void TearDown() override {
    if (cluster_ == nullptr) return;
    HttpClient c(cluster_->Options());
    for (const std::string& t : tables_) {
      absl::StatusOr<std::string> r = c.Query(
          absl::StrCat("DROP TABLE IF EXISTS ", t, " ON CLUSTER ", cluster_->cluster_name()));
      EXPECT_TRUE(r.ok()) << r.status();
    }
  }
  HttpClient Client(const std::vector<std::string>& names = {}) {
    return HttpClient(cluster_->Options(names));
  }
  // Creates `t` (ReplicatedMergeTree on every server) and `t_all` (Distributed over the
  // cluster, sharded by agent); returns t.
  std::string CreateTables() {
    std::string t = UniqueTableName("ch_client_test");
    const std::string& cl = cluster_->cluster_name();
    HttpClient c = Client();
    tables_.push_back(t + "_all");
    tables_.push_back(t);
    for (const std::string& sql : {
             absl::StrCat("CREATE TABLE ", t, " ON CLUSTER ", cl,
                          " (agent String, seq UInt64, v UInt64) ENGINE = ReplicatedMergeTree("
                          "'/clickhouse/tables/{shard}/", t, "', '{replica}') ORDER BY (agent, seq)"),
             absl::StrCat("CREATE TABLE ", t, "_all ON CLUSTER ", cl, " AS ", t,
                          " ENGINE = Distributed(", cl, ", default, ", t, ", cityHash64(agent))")}) {
      absl::StatusOr<std::string> r = c.Query(sql);
      EXPECT_TRUE(r.ok()) << sql << ": " << r.status();
    }
    return t;
  }
  // Polls until every shard1 replica holds the same rows; returns how long that took.
  absl::Duration WaitShard1Converged(const std::string& t, absl::Duration limit) {
    HttpClient r1 = Client({"shard1-replica1"}), r2 = Client({"shard1-replica2"});
    absl::Time t0 = absl::Now();
    while (absl::Now() - t0 < limit) {
      absl::StatusOr<std::string> a = r1.Query("SELECT count() FROM " + t);
      absl::StatusOr<std::string> b = r2.Query("SELECT count() FROM " + t);
      if (a.ok() && b.ok() && *a == *b) return absl::Now() - t0;
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << "shard1 replicas of " << t << " did not converge in " << limit;
    return limit;
  }

  bool fresh_ = false;
  absl::StatusOr<std::unique_ptr<ClickHouseCluster>> acquired_ = absl::UnknownError("unused");
  ClickHouseCluster* cluster_ = nullptr;
  std::vector<std::string> tables_;
};

TEST_F(ClickHouseClusterTest, EveryServerAnswersAndTheUrlParses) {
  for (const std::string& name : cluster_->names()) {
    HttpClient c = Client({name});
    absl::StatusOr<std::string> r = c.Query("SELECT 1");
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_EQ(*r, "1\n");
  }
  absl::StatusOr<ClickHouseUrl> u = ParseClickHouseUrl(cluster_->Url());
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->client.endpoints.size(), 3u);
  EXPECT_EQ(u->cluster, "opmap");
  // 300k rows come back chunked.
  HttpClient c(u->client);
  absl::StatusOr<std::string> big =
      c.Query("SELECT number FROM system.numbers LIMIT 300000 FORMAT TSV");
  ASSERT_TRUE(big.ok()) << big.status();
  std::vector<absl::string_view> lines = absl::StrSplit(*big, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 300000u);
  EXPECT_EQ(lines.back(), "299999");
}

TEST_F(ClickHouseClusterTest, ResentBlockIsCountedOnceThroughAnyReplica) {
  std::string t = CreateTables();
  const std::string all = "SELECT count() FROM " + t + "_all";
  const std::string a = Block(0, 1000);
  HttpClient r1 = Client({"shard1-replica1"}), r2 = Client({"shard1-replica2"}),
             s2 = Client({"shard2-replica1"});
  // Replication is asynchronous: the part written on one shard1 replica reaches the other
  // a little later, and a read may be served by either. Count once both hold the same.
  auto settled = [&] {
    WaitShard1Converged(t, absl::Seconds(30));
    return Count(r1, all);
  };
  ASSERT_TRUE(r1.Insert("INSERT INTO " + t + "_all FORMAT RowBinary", a).ok());
  EXPECT_EQ(settled(), 1000);
  // The identical block again, through each server: dropped every time.
  for (HttpClient* c : {&r2, &s2, &r1}) {
    absl::Status s = c->Insert("INSERT INTO " + t + "_all FORMAT RowBinary", a);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(settled(), 1000);
  }
  // A different batch is stored.
  ASSERT_TRUE(r2.Insert("INSERT INTO " + t + "_all FORMAT RowBinary", Block(1000, 500)).ok());
  EXPECT_EQ(settled(), 1500);
  // The same rows in another order are dropped too: the block id hashes the part as
  // written, sorted by ORDER BY (agent, seq). Rows with equal keys keep their input order,
  // so the store must still serialize a batch deterministically.
  ASSERT_TRUE(r1.Insert("INSERT INTO " + t + "_all FORMAT RowBinary", Block(0, 1000, true)).ok());
  EXPECT_EQ(settled(), 1500);

  WaitShard1Converged(t, absl::Seconds(30));
  int64_t shard1 = Count(r1, "SELECT count() FROM " + t);
  int64_t shard1_r2 = Count(r2, "SELECT count() FROM " + t);
  int64_t shard2 = Count(s2, "SELECT count() FROM " + t);
  std::cout << "[measure] dedup: 1000-row block sent 4x (+1x reordered) + 500 new -> "
            << Count(r1, all) << " rows (shard1 " << shard1 << "/" << shard1_r2
            << ", shard2 " << shard2 << ")\n";
  EXPECT_EQ(shard1, shard1_r2);
  EXPECT_EQ(shard1 + shard2, 1500);
  for (HttpClient* c : {&r2, &s2}) EXPECT_EQ(Count(*c, all), 1500);
  EXPECT_GT(shard1, 0);  // cityHash64(agent) spreads 16 agents over both shards
  EXPECT_GT(shard2, 0);
}

TEST_F(ClickHouseClusterTest, DeadEndpointFailsOverToLiveOne) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);  // a port nobody listens on
  ClientOptions o = cluster_->Options({"shard2-replica1"});
  o.endpoints.insert(o.endpoints.begin(), Endpoint{"127.0.0.1", ntohs(a.sin_port)});
  HttpClient c(o);
  absl::StatusOr<Response> r = c.Post("", "SELECT 1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->http_status, 200);
  EXPECT_EQ(r->endpoint, absl::StrCat("127.0.0.1:", cluster_->HttpPort("shard2-replica1")));
}

// TLS: the servers' HTTPS port, certificates signed by the cluster's
// own CA (scripts/clickhouse_cluster.sh). Through a clickhouse+https:// URL verified
// against that CA it answers; without the CA, or as another host name, the certificate is
// refused and nothing is sent.
TEST_F(ClickHouseClusterTest, TlsVerifiesTheServerAndCarriesTheStore) {
  const std::string ca = cluster_->Env("CH_TLS_CA");
  const std::string ports = cluster_->Env("CH_HTTPS_PORTS");
  if (ca.empty() || ports.empty()) {
    GTEST_SKIP() << "unavailable: the cluster has no HTTPS port (no openssl when it started)";
  }
  uint32_t port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(ports.substr(0, ports.find(',')), &port)) << ports;
  absl::StatusOr<ClickHouseUrl> url = ParseClickHouseUrl(
      absl::StrCat("clickhouse+https://127.0.0.1:", port, "/default?user=default&ca=", ca));
  ASSERT_TRUE(url.ok()) << url.status();
  ASSERT_TRUE(url->client.tls);
  absl::StatusOr<Response> r = HttpClient(url->client).Post("", "SELECT 1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->http_status, 200);
  EXPECT_EQ(r->body, "1\n");

  ClientOptions no_ca = url->client;
  no_ca.ca_file.clear();  // the system's CAs do not know the test CA
  absl::StatusOr<std::string> refused = HttpClient(no_ca).Query("SELECT 1");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "TLS")) << refused.status();
  ClientOptions other_name = url->client;
  other_name.endpoints = {Endpoint{"localhost.", static_cast<uint16_t>(port)}};
  refused = HttpClient(other_name).Query("SELECT 1");
  EXPECT_FALSE(refused.ok()) << "a certificate for 127.0.0.1/localhost accepted as 'localhost.'";
  // Plain HTTP to the HTTPS port gets no answer it could mistake for one.
  ClientOptions plain = url->client;
  plain.tls = false;
  plain.ca_file.clear();
  EXPECT_FALSE(HttpClient(plain).Query("SELECT 1").ok());
}

TEST_F(ClickHouseClusterTest, ErrorsCarryClickHouseCodeAndText) {
  HttpClient c = Client({"shard1-replica1"});
  absl::StatusOr<std::string> r = c.Query("SELECT FROM WHERE");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_EQ(ClickHouseErrorCode(r.status()), 62);  // SYNTAX_ERROR
  EXPECT_TRUE(absl::StrContains(r.status().message(), "Syntax error")) << r.status();

  r = c.Query("SELECT * FROM no_such_table_opmap");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_EQ(ClickHouseErrorCode(r.status()), 60);  // UNKNOWN_TABLE
  EXPECT_TRUE(absl::StrContains(r.status().message(), "doesn't exist")) << r.status();

  ClientOptions o = cluster_->Options({"shard1-replica1"});
  o.password = "wrong";
  r = HttpClient(o).Query("SELECT 1");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnauthenticated) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "Wrong password")) << r.status();

  // Truncated RowBinary (a String claims 5 bytes, 2 follow): rejected as bad data.
  std::string t = UniqueTableName("ch_client_err");
  ASSERT_TRUE(c.Query("CREATE TABLE " + t + " (s String) ENGINE = Memory").ok());
  tables_.push_back(t);
  absl::Status s = c.Insert("INSERT INTO " + t + " FORMAT RowBinary", std::string("\x05" "ab"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_GT(ClickHouseErrorCode(s), 0) << s;
  EXPECT_EQ(Count(c, "SELECT count() FROM " + t), 0);
}

// SIGKILLs a replica, so it always runs on a cluster of its own.
class ClickHouseFaultTest : public ClickHouseClusterTest {
 protected:
  static void SetUpTestSuite() {}
  static void TearDownTestSuite() {}
  void SetUp() override {
    fresh_ = true;
    ClickHouseClusterTest::SetUp();
  }
  void TearDown() override {}  // the cluster goes away with its tables
};

TEST_F(ClickHouseFaultTest, ReplicaKilledMidInsertCatchesUpWithNothingLostOrDoubled) {
  std::string t = CreateTables();
  const std::string insert = "INSERT INTO " + t + "_all FORMAT RowBinary";
  constexpr int kBatches = 40, kRows = 500;
  HttpClient r1 = Client({"shard1-replica1"});
  // Lists the doomed replica first: while it is down every call fails over.
  HttpClient r2_first = Client({"shard1-replica2", "shard1-replica1"});
  absl::Duration down_for;
  absl::Time killed_at;
  for (int b = 0; b < kBatches; ++b) {
    if (b == 10) {
      ASSERT_TRUE(cluster_->KillReplica("shard1-replica2").ok());
      killed_at = absl::Now();
    }
    if (b == 25) {
      absl::Time t0 = absl::Now();
      absl::Status s = cluster_->RestartReplica("shard1-replica2");
      ASSERT_TRUE(s.ok()) << s;
      std::cout << "[measure] replica restart until SELECT 1: "
                << absl::ToInt64Milliseconds(absl::Now() - t0) << " ms\n";
      down_for = absl::Now() - killed_at;
    }
    HttpClient& c = (b % 2 == 0) ? r1 : r2_first;
    absl::Status s = c.Insert(insert, Block(static_cast<uint64_t>(b) * kRows, kRows));
    ASSERT_TRUE(s.ok()) << "batch " << b << ": " << s;
    if (b == 12 || b == 30) {  // an agent resend of the previous batch, mid-fault and after
      s = r1.Insert(insert, Block(static_cast<uint64_t>(b - 1) * kRows, kRows));
      ASSERT_TRUE(s.ok()) << "resend " << b - 1 << ": " << s;
    }
  }
  absl::Duration catch_up = WaitShard1Converged(t, absl::Seconds(60));
  const int64_t expected = int64_t{kBatches} * kRows;
  EXPECT_EQ(Count(r1, "SELECT count() FROM " + t + "_all"), expected);
  EXPECT_EQ(Count(r1, "SELECT uniqExact(seq) FROM " + t + "_all"), expected);
  HttpClient r2 = Client({"shard1-replica2"}), s2 = Client({"shard2-replica1"});
  int64_t a = Count(r1, "SELECT count() FROM " + t), b = Count(r2, "SELECT count() FROM " + t);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a + Count(s2, "SELECT count() FROM " + t), expected);
  std::cout << "[measure] replica down " << absl::ToInt64Milliseconds(down_for)
            << " ms; replicas equal " << absl::ToInt64Milliseconds(catch_up)
            << " ms after the last insert; shard1 replicas " << a << "/" << b << " rows; total "
            << expected << "\n";
}

// A replica killed between writing parts and committing them to ZooKeeper finds them
// "unexpected" at restart; past ClickHouse's safety ratio it refuses to start. Planted here
// as two copies of its only part (2/3 of its rows): the script restarts it with
// force_restore_data, the copies are detached and the replica holds its peer's rows, once.
// DISABLED: in 1 of 5 runs the first restart failed otherwise ("Caught exception while
// loading metadata: std::system_error, Invalid argument", 18.16) before the refusal this
// test plants; not yet understood. Run it with --gtest_also_run_disabled_tests.
TEST_F(ClickHouseFaultTest, DISABLED_ReplicaRefusingUnexpectedPartsIsRestoredFromItsPeer) {
  std::string t = CreateTables();
  constexpr int kRows = 1000;
  HttpClient r1 = Client({"shard1-replica1"}), r2 = Client({"shard1-replica2"});
  ASSERT_TRUE(r1.Insert("INSERT INTO " + t + " FORMAT RowBinary", Block(0, kRows)).ok());
  WaitShard1Converged(t, absl::Seconds(60));
  ASSERT_EQ(Count(r2, "SELECT count() FROM " + t), kRows);
  ASSERT_TRUE(cluster_->KillReplica("shard1-replica2").ok());

  const std::filesystem::path table =
      std::filesystem::path(cluster_->dir()) / "shard1-replica2/data/data/default" / t;
  std::vector<std::filesystem::path> parts;
  for (const auto& entry : std::filesystem::directory_iterator(table)) {
    if (absl::StartsWith(entry.path().filename().string(), "all_")) parts.push_back(entry.path());
  }
  ASSERT_EQ(parts.size(), 1u) << table;
  for (const char* planted : {"all_90_90_0", "all_91_91_0"}) {
    std::filesystem::copy(parts[0], table / planted, std::filesystem::copy_options::recursive);
  }

  absl::Status s = cluster_->RestartReplica("shard1-replica2");
  ASSERT_TRUE(s.ok()) << s;
  WaitShard1Converged(t, absl::Seconds(60));
  EXPECT_EQ(Count(r2, "SELECT count() FROM " + t), kRows);
  EXPECT_EQ(Count(r2, "SELECT uniqExact(seq) FROM " + t), kRows);
  EXPECT_FALSE(std::filesystem::exists(table / "all_90_90_0"));
  EXPECT_FALSE(std::filesystem::exists(table / "all_91_91_0"));
}

}  // namespace
}  // namespace opmap::collector::clickhouse_client
