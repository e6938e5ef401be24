// The collector against hostile peers: the fixture and helpers its suites share
// (collector_hostile_test.cc, collector_hostile_memory_test.cc): one session's kernel
// batches, an Ingest stream that sends and reads acks, and a collector with a fleet token.
#ifndef OPMAP_TESTS_INTEGRATION_COLLECTOR_HOSTILE_FIXTURE_H_
#define OPMAP_TESTS_INTEGRATION_COLLECTOR_HOSTILE_FIXTURE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/support/sync_stream.h>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "analysis/import/kineto_importer.h"
#include "collector/received_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.grpc.pb.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing::hostile {

using ::testing::HasSubstr;
using opmap::v1::Ack;
using opmap::v1::Batch;

constexpr char kFleetToken[] = "fleet-token-0123456789abcdef";

// One session's batch of `kernels` kernels named "k".
inline Batch KernelBatch(const std::string& agent, const std::string& session, uint64_t seq,
                  int kernels, bool last, int64_t dur_ns = 1000) {
  Batch b;
  b.set_agent_id(agent);
  b.set_session_id(session);
  b.set_seq(seq);
  b.mutable_resource()->set_host("hostile-test");
  if (seq == 1) {
    b.mutable_strings()->add_strings("");
    b.mutable_strings()->add_strings("k");
  } else {
    b.mutable_strings()->set_base_index(2);
  }
  for (int i = 0; i < kernels; ++i) {
    b.mutable_kernels()->add_start_ns(1'700'000'000'000'000'000 + seq * 1'000'000'000 + i * 10);
    b.mutable_kernels()->add_dur_ns(dur_ns);
    b.mutable_kernels()->add_name_id(1);
    b.mutable_kernels()->add_device(0);
    b.mutable_kernels()->add_stream(7);
  }
  b.set_window_start_ns(1'700'000'000'000'000'000);
  b.set_last_in_session(last);
  return b;
}

// An Ingest stream with its token; Send writes one batch and reads its ack.
class Stream {
 public:
  Stream(const std::shared_ptr<grpc::Channel>& channel, const std::string& token)
      : stub_(opmap::v1::Ingest::NewStub(channel)) {
    ctx_.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    stream_ = stub_->Ingest(&ctx_);
  }
  // The ack, or nullopt when the stream ended (then Finish() says why).
  std::optional<Ack> Send(const Batch& b) {
    if (!stream_->Write(b)) return std::nullopt;
    Ack ack;
    if (!stream_->Read(&ack)) return std::nullopt;
    return ack;
  }
  grpc::Status Finish() {
    stream_->WritesDone();
    Ack ack;
    while (stream_->Read(&ack)) {
    }
    return stream_->Finish();
  }

 private:
  std::unique_ptr<opmap::v1::Ingest::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<Batch, Ack>> stream_;
};

class CollectorHostileTest : public ::testing::Test {
 protected:
  void StartCollector(std::vector<std::string> extra = {}) {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    options.extra = std::move(extra);
    collector_ = std::make_unique<CollectorProcess>(options);
    // The fixture's tokens plus one bound to the fleet's agent ids.
    WriteFileOrDie(collector_->tokens_file(),
                   absl::StrCat(kAgentToken, " agent importer\n", kAnalystToken,
                                " analyst alice\n", kAdminToken, " admin root\n", kFleetToken,
                                " agent fleet agents=fleet-*\n"));
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  }
  void TearDown() override {
    if (HasFailure() && collector_) std::cerr << "collector stderr:\n" << collector_->Log();
  }
  std::shared_ptr<grpc::Channel> Channel() {
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);
    return grpc::CreateCustomChannel(collector_->address(), grpc::InsecureChannelCredentials(),
                                     args);
  }
  // Sessions w<first>..w<first+n-1> of agent "a", one complete batch of 50 kernels each.
  void StoreWindows(int first, int n) {
    Stream s(Channel(), kAgentToken);
    for (int i = first; i < first + n; ++i) {
      ASSERT_TRUE(s.Send(KernelBatch("a", absl::StrCat("w", i), 1, 50, true)));
    }
    EXPECT_TRUE(s.Finish().ok());
  }
  // GPU events stored for `session` (0 when it has none), through the real CLI.
  int64_t StoredKernels(const std::string& session) {
    RunResult r = Opmap({"export", "--collector", collector_->address(), "--token", kAdminToken,
                         "--session", session, "--out", dir_.File("export.json")},
                        dir_.path());
    if (r.exit_code != 0) return 0;
    absl::StatusOr<analysis::Trace> back =
        analysis::ImportKinetoBytes(ReadFileOrEmpty(dir_.File("export.json")));
    // An export of no session holds no event (the importer refuses it as empty).
    return back.ok() ? static_cast<int64_t>(back->gpu_events.size()) : 0;
  }
  // One Ingest stream carrying `bytes` as its only message (ReceivedBatch's traits send
  // them as they are, Batch or not); the status the collector ended it with.
  grpc::Status SendRawMessage(const std::string& bytes) {
    std::shared_ptr<grpc::Channel> channel = Channel();
    const grpc::internal::RpcMethod method("/opmap.v1.Ingest/Ingest",
                                           grpc::internal::RpcMethod::BIDI_STREAMING, channel);
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAgentToken));
    std::unique_ptr<grpc::ClientReaderWriter<collector::ReceivedBatch, Ack>> stream(
        grpc::internal::ClientReaderWriterFactory<collector::ReceivedBatch, Ack>::Create(
            channel.get(), method, &ctx));
    collector::ReceivedBatch message;
    message.bytes = bytes;
    if (stream->Write(message)) stream->WritesDone();
    Ack ack;
    EXPECT_FALSE(stream->Read(&ack));
    return stream->Finish();
  }
  // The well-behaved peer: one complete session through a fresh stream.
  void WellBehavedSessionIsStored(const std::string& session) {
    Stream s(Channel(), kAgentToken);
    std::optional<Ack> ack = s.Send(KernelBatch("good-agent", session, 1, 3, true));
    ASSERT_TRUE(ack.has_value()) << s.Finish().error_message();
    EXPECT_EQ(ack->durable_seq(), 1u);
    EXPECT_TRUE(s.Finish().ok());
    EXPECT_EQ(StoredKernels(session), 3);
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

// Finding 6: any agent token could write any agent's session. A token bound with
// agents=fleet-* is refused PERMISSION_DENIED for another agent id: counted, logged with
// the principal, nothing stored.

}  // namespace opmap::testing::hostile

#endif  // OPMAP_TESTS_INTEGRATION_COLLECTOR_HOSTILE_FIXTURE_H_
