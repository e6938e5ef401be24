// One token cannot starve the others: 400 Query calls that send
// their headers and never a body held every thread of the collector's pool, and every
// other client — queries, `opmap import`, agents — was refused "Server Threadpool
// Exhausted". Now a token holds at most its share (--max-queries-per-token), the rest are
// refused at once, and a call whose body does not come is cancelled
// (--request-body-timeout); an Ingest stream that sends nothing is cancelled too
// (--stream-idle-timeout). The real opmap-collector on 127.0.0.1, the real opmap CLI.
#include <sys/stat.h>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/sync_stream.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.grpc.pb.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;
using opmap::v1::LatencyRequest;
using opmap::v1::LatencyResponse;

constexpr char kHogToken[] = "hog-analyst-token-0123456789";
constexpr int kHeld = 400;

// A Query call with its headers sent and no request message: what the probe held.
struct HeldCall {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<LatencyRequest, LatencyResponse>> stream;
};

class CollectorCallLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    options.extra = {"--request-body-timeout", "3s", "--stream-idle-timeout", "3s"};
    collector_ = std::make_unique<CollectorProcess>(options);
    WriteFileOrDie(collector_->tokens_file(),
                   absl::StrCat(kAgentToken, " agent importer\n", kAnalystToken,
                                " analyst alice\n", kHogToken, " analyst hog\n", kAdminToken,
                                " admin root\n"));
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  }
  void TearDown() override {
    if (HasFailure() && collector_) std::cerr << "collector stderr:\n" << collector_->Log();
  }
  // A channel of its own (its own connection), so 400 calls do not queue behind one
  // connection's stream limit.
  std::shared_ptr<grpc::Channel> NewChannel(int i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("opmap.test.channel", i);
    return grpc::CreateCustomChannel(collector_->address(), grpc::InsecureChannelCredentials(),
                                     args);
  }
  int Query(const char* token) {
    RunResult r = Opmap({"query", "latency", "--collector", collector_->address(), "--token",
                         token, "--format", "json"},
                        dir_.path());
    last_err_ = r.err;
    return r.exit_code;
  }
  // Waits (up to 15 s) until the metric reaches `at_least`; its last value.
  int64_t AwaitMetric(const std::string& name, int64_t at_least) {
    int64_t v = -1;
    for (int i = 0; i < 150 && (v = collector_->Metric(name)) < at_least; ++i) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    return v;
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
  std::string last_err_;
};

TEST_F(CollectorCallLimitsTest, OneTokenHolding400CallsStarvesNobody) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 8; ++i) channels.push_back(NewChannel(i));
  const grpc::internal::RpcMethod method(
      "/opmap.v1.Query/LatencyPercentiles", grpc::internal::RpcMethod::BIDI_STREAMING,
      channels[0]);
  std::vector<std::unique_ptr<HeldCall>> held;
  for (int i = 0; i < kHeld; ++i) {
    auto call = std::make_unique<HeldCall>();
    call->context.AddMetadata("authorization", absl::StrCat("Bearer ", kHogToken));
    grpc::Channel* channel = channels[i % channels.size()].get();
    call->stream.reset(
        grpc::internal::ClientReaderWriterFactory<LatencyRequest, LatencyResponse>::Create(
            channel,
            grpc::internal::RpcMethod(method.name(), grpc::internal::RpcMethod::BIDI_STREAMING,
                                      channels[i % channels.size()]),
            &call->context));
    held.push_back(std::move(call));
  }
  // All but the token's share are refused at once, naming the limit.
  EXPECT_GE(AwaitMetric("opmap_collector_calls_refused_total", kHeld - 8), kHeld - 8);
  EXPECT_NE(Query(kHogToken), 0);
  EXPECT_THAT(last_err_, HasSubstr("token 'hog' has 8 Query calls in progress, the limit per "
                                   "token (--max-queries-per-token 8)"));

  // Everyone else is served meanwhile: a query, an import (an Ingest stream, as an agent's).
  EXPECT_EQ(Query(kAnalystToken), 0) << last_err_;
  WriteFileOrDie(dir_.File("trace.json"),
                 R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, )"
                 R"("tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7}}]})");
  RunResult imported = Opmap({"import", dir_.File("trace.json"), "--collector",
                              collector_->address(), "--token", kAgentToken, "--retry-for", "5s"},
                             dir_.path());
  EXPECT_EQ(imported.exit_code, 0) << imported.err;

  // The held calls are cancelled once their body is 3 s late; the token is served again.
  EXPECT_GE(AwaitMetric("opmap_collector_calls_timed_out_total", 8), 8);
  int code = -1;
  for (int i = 0; i < 50 && (code = Query(kHogToken)) != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(code, 0) << last_err_;
  for (auto& call : held) call->context.TryCancel();
}

TEST_F(CollectorCallLimitsTest, AnIdleIngestStreamIsCancelled) {
  std::unique_ptr<opmap::v1::Ingest::Stub> stub = opmap::v1::Ingest::NewStub(NewChannel(0));
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", kAgentToken));
  auto stream = stub->Ingest(&context);
  EXPECT_EQ(AwaitMetric("opmap_collector_ingest_streams", 1), 1);
  // Nothing sent: cancelled after --stream-idle-timeout (3 s), and its slot freed.
  EXPECT_GE(AwaitMetric("opmap_collector_calls_timed_out_total", 1), 1);
  opmap::v1::Ack ack;
  EXPECT_FALSE(stream->Read(&ack));
  EXPECT_FALSE(stream->Finish().ok());
  EXPECT_EQ(collector_->Metric("opmap_collector_ingest_streams"), 0);
}

// The probe's other hold: 400 ExportTrace calls whose client never reads took the
// collector's RSS to 2.8 GB. Now a token runs at most --max-exports-per-token of them, and
// an export whose reader takes no chunk for --write-timeout is cancelled.
TEST_F(CollectorCallLimitsTest, ExportsNobodyReadsAreBoundedAndCutOff) {
  collector_->Kill();
  CollectorProcess::Options options;  // a directory of its own: a fresh store and logs
  options.dir = dir_.File("exports");
  ASSERT_EQ(mkdir(options.dir.c_str(), 0700), 0);
  options.extra = {"--write-timeout", "3s"};
  collector_ = std::make_unique<CollectorProcess>(options);
  WriteFileOrDie(collector_->tokens_file(),
                 absl::StrCat(kAgentToken, " agent importer\n", kAnalystToken,
                              " analyst alice\n", kHogToken, " analyst hog\n"));
  ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  // One session of 200,000 kernels: its export is ~30 MB of JSON.
  std::string trace = "{\"traceEvents\": [";
  for (int i = 0; i < 200000; ++i) {
    absl::StrAppend(&trace, i ? ",\n" : "",
                    R"({"ph": "X", "cat": "kernel", "name": "a_kernel_name_of_some_length", )",
                    R"("pid": 0, "tid": 7, "ts": )", 10 + i * 3,
                    R"(, "dur": 2, "args": {"device": 0, "stream": 7}})");
  }
  WriteFileOrDie(dir_.File("big.json"), trace + "]}");
  RunResult imported = Opmap({"import", dir_.File("big.json"), "--collector",
                              collector_->address(), "--token", kAgentToken},
                             dir_.path());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const double before = PeakRssMiB(collector_->pid());

  constexpr int kExports = 40;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<opmap::v1::TraceChunk>>> readers;
  for (int i = 0; i < kExports; ++i) {
    channels.push_back(NewChannel(i));
    auto stub = opmap::v1::Query::NewStub(channels.back());
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->AddMetadata("authorization", absl::StrCat("Bearer ", kHogToken));
    opmap::v1::ExportTraceRequest request;
    readers.push_back(stub->ExportTrace(contexts.back().get(), request));  // never read
  }
  EXPECT_GE(AwaitMetric("opmap_collector_calls_refused_total", kExports - 2), kExports - 2);
  // The two admitted are cut off once their reader has taken nothing for 3 s.
  EXPECT_GE(AwaitMetric("opmap_collector_calls_timed_out_total", 2), 2);
  const double peak = PeakRssMiB(collector_->pid());
  std::printf("%d exports nobody reads: collector peak RSS %.0f MiB (%.0f MiB before)\n",
              kExports, peak, before);
  EXPECT_LT(peak - before, 300) << "exports nobody reads grew the collector by "
                                << peak - before << " MiB";
  // Another analyst exports meanwhile and after.
  RunResult exported = Opmap({"export", "--collector", collector_->address(), "--token",
                              kAnalystToken, "--out", dir_.File("out.json")},
                             dir_.path());
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  for (auto& c : contexts) c->TryCancel();
}

}  // namespace
}  // namespace opmap::testing
