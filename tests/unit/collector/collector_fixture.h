// Test fixture for the collector's services: a Collector (real SQLite store in a temp
// dir + IngestService + QueryService + gRPC server on 127.0.0.1:0), an Ingest stream
// client, a store wrapper that can fail commits, and a small session's batches.
#ifndef OPMAP_TESTS_UNIT_COLLECTOR_COLLECTOR_FIXTURE_H_
#define OPMAP_TESTS_UNIT_COLLECTOR_COLLECTOR_FIXTURE_H_

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <gtest/gtest.h>

#include "analysis/model/trace.h"
#include "collector/ingest_service.h"
#include "collector/query_service.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.grpc.pb.h"
#include "tests/unit/store/store_engines.h"

namespace opmap::collector::test_support {

using opmap::v1::Ack;
using opmap::v1::Batch;

inline constexpr char kAgentToken[] = "agent-token-0123456789";
inline constexpr char kAnalystToken[] = "analyst-token-0123456789";
inline constexpr char kTokens[] =
    "agent-token-0123456789 agent fleet\n"
    "analyst-token-0123456789 analyst alice\n";
inline constexpr int64_t kBase = 1'700'000'000'000'000'000;
inline constexpr int64_t kRecords = 13;  // records of SmallTrace()

// 2 operator ranges, 5 launches, 5 kernels + 1 memcpy on one thread; batches of 3
// records give 5 batches; batch 5's kernel name ("gemm2") is defined by batch 2.
analysis::Trace SmallTrace();
// SmallTrace() as agent "agent-1", session `session`, host node-1, model llama@r1.
std::vector<Batch> SessionBatches(const std::string& session);

// Delegates to a real store; CommitBatch fails while `fail_commits` is set. Counts the
// session rebuilds it serves (LoadSessionPayloads).
class FlakyStore final : public Store {
 public:
  explicit FlakyStore(Store* inner) : inner_(inner) {}
  std::atomic<bool> fail_commits{false};
  std::atomic<int64_t> payload_loads{0};

  absl::StatusOr<SessionState> GetSession(std::string_view a, std::string_view s) override {
    return inner_->GetSession(a, s);
  }
  absl::StatusOr<CommitOutcome> CommitBatch(const BatchCommit& commit) override {
    if (fail_commits) return absl::UnavailableError("disk on fire");
    return inner_->CommitBatch(commit);
  }
  absl::StatusOr<std::vector<std::string>> LoadSessionPayloads(std::string_view a,
                                                               std::string_view s) override {
    ++payload_loads;
    return inner_->LoadSessionPayloads(a, s);
  }
  absl::StatusOr<opmap::v1::LatencyResponse> QueryLatency(
      const opmap::v1::LatencyRequest& r) override {
    return inner_->QueryLatency(r);
  }
  absl::StatusOr<opmap::v1::TimeBreakdownResponse> QueryTimeBreakdown(
      const opmap::v1::TimeBreakdownRequest& r) override {
    return inner_->QueryTimeBreakdown(r);
  }
  absl::StatusOr<opmap::v1::TopKernelsResponse> QueryTopKernels(
      const opmap::v1::TopKernelsRequest& r) override {
    return inner_->QueryTopKernels(r);
  }
  absl::StatusOr<opmap::v1::CountersResponse> QueryCounters(
      const opmap::v1::CountersRequest& r) override {
    return inner_->QueryCounters(r);
  }
  absl::StatusOr<opmap::v1::PowerResponse> QueryPower(
      const opmap::v1::PowerRequest& r) override {
    return inner_->QueryPower(r);
  }
  absl::Status ForEachBatch(const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter,
                            const std::function<absl::Status(std::string_view)>& visit) override {
    return inner_->ForEachBatch(range, filter, visit);
  }
  absl::StatusOr<int64_t> ExpireRawBefore(int64_t cutoff_ns) override {
    return inner_->ExpireRawBefore(cutoff_ns);
  }
  absl::StatusOr<SignoffOutcome> RecordSignoff(const opmap::v1::Signoff& s) override {
    return inner_->RecordSignoff(s);
  }
  absl::StatusOr<std::vector<opmap::v1::Signoff>> ListSignoffs(
      const opmap::v1::ListSignoffsRequest& r) override {
    return inner_->ListSignoffs(r);
  }
  StoreStats Stats() override { return inner_->Stats(); }

 private:
  Store* inner_;
};

// A collector in this process: store + services + gRPC server on 127.0.0.1:0.
class Collector {
 public:
  // `store_url`: "sqlite:PATH" or "clickhouse://..." (CollectorTest::store_).
  explicit Collector(const std::string& store_url, IngestOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(store_url);
    EXPECT_TRUE(store.ok()) << store_url << ": " << store.status();
    real_store_ = std::move(*store);
    flaky_ = std::make_unique<FlakyStore>(real_store_.get());
    auth_ = std::make_unique<Authenticator>(*Authenticator::FromText(kTokens, "tokens"));
    ingest_ = std::make_unique<IngestService>(flaky_.get(), auth_.get(), &metrics_, options);
    query_ = std::make_unique<QueryService>(flaky_.get(), auth_.get(), &metrics_);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(ingest_.get());
    builder.RegisterService(query_.get());
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
    EXPECT_GT(port_, 0);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
  }
  ~Collector() {
    ingest_->BeginShutdown();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server_->Wait();
  }

  Store& store() { return *real_store_; }
  FlakyStore& flaky() { return *flaky_; }
  CollectorMetrics& metrics() { return metrics_; }
  IngestService& ingest() { return *ingest_; }
  grpc::Server& server() { return *server_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::unique_ptr<Store> real_store_;
  std::unique_ptr<FlakyStore> flaky_;
  std::unique_ptr<Authenticator> auth_;
  CollectorMetrics metrics_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<QueryService> query_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
};

// One Ingest stream: Send() writes a batch and waits for its ack.
class IngestStream {
 public:
  IngestStream(std::shared_ptr<grpc::Channel> channel, const char* token)
      : stub_(opmap::v1::Ingest::NewStub(channel)) {
    if (token != nullptr) context_.AddMetadata("authorization", std::string("Bearer ") + token);
    stream_ = stub_->Ingest(&context_);
  }
  std::optional<Ack> Send(const Batch& batch) {
    if (!stream_->Write(batch)) return std::nullopt;
    Ack ack;
    if (!stream_->Read(&ack)) return std::nullopt;
    return ack;
  }
  grpc::Status Finish() {
    stream_->WritesDone();
    Ack ignored;
    while (stream_->Read(&ignored)) {
    }
    return stream_->Finish();
  }

 private:
  std::unique_ptr<opmap::v1::Ingest::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<Batch, Ack>> stream_;
};

// Parameterized by store engine ("sqlite", "clickhouse"): one behaviour, two engines.
// A fresh temp dir per test with db_ = dir_/opmap.db, and store_ the URL the collectors of
// the test open: that SQLite file, or a ClickHouse database of the test's own
// (tests/unit/store/store_engines.h says where ClickHouse comes from).
class CollectorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/opmap_ingest_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/opmap.db";
    store_ = "sqlite:" + db_;
    if (GetParam() == "clickhouse") {
      absl::StatusOr<std::string> url = collector::testing::ClickHouseUrl();
      if (!url.ok()) {
        const char* no = std::getenv("OPMAP_NO_CLICKHOUSE");
        if (no != nullptr && std::string(no) == "1") GTEST_SKIP() << url.status();
        FAIL() << "ClickHouse engine unavailable: " << url.status();
      }
      store_ = *url;
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, db_, store_;
};

// ExportTrace over gRPC, concatenated, imported back with the Kineto importer.
analysis::Trace ExportAll(std::shared_ptr<grpc::Channel> channel, uint64_t* events = nullptr);

// grpc.health.v1.Health/Check with an empty request, through a generic stub (the health
// proto is not compiled here): the reply's status field 1, or -1 on error.
int HealthStatus(std::shared_ptr<grpc::Channel> channel);

}  // namespace opmap::collector::test_support

#endif  // OPMAP_TESTS_UNIT_COLLECTOR_COLLECTOR_FIXTURE_H_
