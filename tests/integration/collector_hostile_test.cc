// The collector against hostile and broken peers, each test an attack from the
// trust-boundaries review performed against the real `opmap-collector` binary on
// 127.0.0.1: forged sessions, unparseable and overflowing batches, unauthenticated
// bodies, too many streams, incomplete sessions past the memory budget, slow metrics
// clients and a damaged store. Each asserts the service stays up, keeps serving the
// well-behaved peer, and stores nothing forged or changed.

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
#include "tests/integration/collector_hostile_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;
using hostile::CollectorHostileTest;
using hostile::KernelBatch;
using hostile::Stream;
using hostile::kFleetToken;
using opmap::v1::Ack;
using opmap::v1::Batch;

TEST_F(CollectorHostileTest, BoundTokenCannotWriteAnotherAgentsSessions) {
  StartCollector();
  Stream forged(Channel(), kFleetToken);
  EXPECT_FALSE(forged.Send(KernelBatch("opmap-import@victim", "import-0001", 1, 3, true)));
  grpc::Status st = forged.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message(),
            "token 'fleet' may not write agent 'opmap-import@victim' (its agents= allows fleet-*)");
  EXPECT_EQ(collector_->Metric("opmap_collector_permission_denied_total"), 1);
  EXPECT_THAT(collector_->Log(), HasSubstr("ingest refused: token 'fleet' may not write agent"));
  EXPECT_EQ(StoredKernels("import-0001"), 0);
  // Its own agent ids it may write.
  Stream own(Channel(), kFleetToken);
  std::optional<Ack> ack = own.Send(KernelBatch("fleet-host-1", "w1", 1, 2, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 1u);
  EXPECT_TRUE(own.Finish().ok());
  EXPECT_EQ(StoredKernels("w1"), 2);
  // The collector warned at start about the tokens that are not bound.
  EXPECT_THAT(collector_->Log(), HasSubstr("token 'importer' has no agents= binding"));
}

// Finding 6, the import: its session id was deterministic from the file, so another
// token's holder could write it first and the real import printed "61 GPU events" while
// the store held 3 forged kernels. Now the id includes the token's fingerprint.
TEST_F(CollectorHostileTest, ImportSessionsAreNamespacedByToken) {
  const std::string trace = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED(trace);
  StartCollector();
  auto import = [&](const char* token) {
    RunResult r = Opmap({"import", SharedPath(trace), "--collector", collector_->address(),
                         "--token", token, "--format", "json"},
                        dir_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("\"session_id\":\"");
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at + 14, r.out.find('"', at + 14) - at - 14);
  };
  const std::string attacker = import(kAdminToken);  // another principal, first
  const std::string victim = import(kAgentToken);
  ASSERT_FALSE(victim.empty());
  EXPECT_NE(attacker, victim);
  EXPECT_EQ(StoredKernels(victim), 61);
  EXPECT_EQ(import(kAgentToken), victim);  // the same principal: deduplicated
  EXPECT_EQ(StoredKernels(victim), 61);
}

// Finding 11: an unparseable Batch ended the stream with status OK, no ack, no message.
TEST_F(CollectorHostileTest, UnparseableBatchEndsTheStreamInvalidArgument) {
  StartCollector();
  // Not a Batch at all.
  grpc::Status st = SendRawMessage(std::string("\xff\xff\xff\xff\x0f", 5));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "message 1 of this stream (5 bytes) does not parse as opmap.v1.Batch; nothing of "
            "it was stored");
  EXPECT_EQ(collector_->Metric("opmap_collector_malformed_messages_total"), 1);
  WellBehavedSessionIsStored("after-garbage");
}

// Protobuf logs a line for each message whose string field is not UTF-8, and each
// refused batch is logged: a peer sending such messages in a loop filled the log at its
// own rate. Past a burst of 100 the peer's lines are cut to 60 a minute, and the next
// line let through counts what was left out.
TEST_F(CollectorHostileTest, LinesAPeerCausesAreRateLimited) {
  StartCollector();
  const std::string bad_agent_id("\x0a\x01\xff", 3);  // agent_id = "\xff"
  constexpr int kMessages = 400;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(SendRawMessage(bad_agent_id).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_EQ(collector_->Metric("opmap_collector_malformed_messages_total"), kMessages);
  absl::SleepFor(absl::Seconds(1.5));  // room for one more line
  ASSERT_EQ(SendRawMessage(bad_agent_id).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string log = collector_->Log();
  int protobuf_lines = 0;
  for (size_t at = log.find("protobuf error:"); at != std::string::npos;
       at = log.find("protobuf error:", at + 1)) {
    ++protobuf_lines;
  }
  EXPECT_GE(protobuf_lines, 100) << log;
  EXPECT_LE(protobuf_lines, 110) << log;  // the burst, and the ~1 a second regained
  EXPECT_THAT(log, ::testing::ContainsRegex("\\([0-9]+ log lines suppressed: more than 60 a "
                                          "minute\\)"));
  WellBehavedSessionIsStored("after-the-flood");
}

// Finding 7: durations up to INT64_MAX were accepted and sums overflowed (a layer type's
// total came out at −9.2e15 µs). Now a duration over 2^52 ns, or a session whose
// durations would sum past 2^62 ns, is rejected naming the row.
TEST_F(CollectorHostileTest, OverflowingDurationsAreRefusedNamingTheField) {
  StartCollector();
  Stream s(Channel(), kAgentToken);
  std::optional<Ack> ack =
      s.Send(KernelBatch("agent-x", "overflow", 1, 2, true, int64_t{1} << 62));
  ASSERT_TRUE(ack.has_value());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).field(), "kernels.dur_ns[0]");
  EXPECT_EQ(ack->rejected(0).code(), opmap::v1::REJECTION_CODE_INVALID_VALUE);
  EXPECT_THAT(ack->rejected(0).message(), HasSubstr("over the limit of 2^52 ns"));
  // 1,025 kernels of 2^52 ns each: the running sum passes 2^62 at row 1024.
  ack = s.Send(KernelBatch("agent-x", "sum-overflow", 1, 1025, true, int64_t{1} << 52));
  ASSERT_TRUE(ack.has_value());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).field(), "kernels.dur_ns[1024]");
  EXPECT_THAT(ack->rejected(0).message(), HasSubstr("would sum past 2^62 ns"));
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(StoredKernels("overflow"), 0);
  EXPECT_EQ(StoredKernels("sum-overflow"), 0);
  WellBehavedSessionIsStored("after-overflow");
}

// Finding 9: eight unauthenticated 60 MB calls took the collector from 20 MB to a 1 GB
// peak. Now the token is checked before the body is read.
TEST_F(CollectorHostileTest, UnauthenticatedBodiesAreNotBuffered) {
  StartCollector();
  const double before = PeakRssMiB(collector_->pid());
  std::vector<std::thread> callers;
  std::vector<grpc::StatusCode> codes(8, grpc::StatusCode::OK);
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&, i] {
      auto stub = opmap::v1::Query::NewStub(Channel());
      grpc::ClientContext ctx;  // no token
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      opmap::v1::LatencyRequest req;
      req.mutable_filter()->set_host(std::string(60 << 20, 'x'));
      opmap::v1::LatencyResponse resp;
      codes[i] = stub->LatencyPercentiles(&ctx, req, &resp).error_code();
    });
  }
  for (std::thread& t : callers) t.join();
  for (grpc::StatusCode c : codes) EXPECT_EQ(c, grpc::StatusCode::UNAUTHENTICATED);
  const double after = PeakRssMiB(collector_->pid());
  std::printf("unauthenticated 8 x 60 MB: collector peak RSS %.1f -> %.1f MiB\n", before, after);
  EXPECT_LT(after - before, 150) << "peak RSS " << before << " -> " << after << " MiB";
  WellBehavedSessionIsStored("after-unauthenticated");
}

// Limits on streams, per token and in all: more are refused RESOURCE_EXHAUSTED (the agent
// retries with backoff) and the streams already open keep working.
TEST_F(CollectorHostileTest, StreamsOverTheLimitsAreRefused) {
  StartCollector({"--max-streams", "3", "--max-streams-per-token", "2"});
  std::vector<std::unique_ptr<Stream>> open;
  for (int i = 0; i < 2; ++i) {
    open.push_back(std::make_unique<Stream>(Channel(), kAgentToken));
    ASSERT_TRUE(open.back()->Send(KernelBatch("a", absl::StrCat("s", i), 1, 1, false)));
  }
  Stream third(Channel(), kAgentToken);
  EXPECT_FALSE(third.Send(KernelBatch("a", "s2", 1, 1, false)));
  grpc::Status st = third.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(st.error_message(),
            "token 'importer' has 2 Ingest streams in progress, the limit per token "
            "(--max-streams-per-token 2); retry later");
  open.push_back(std::make_unique<Stream>(Channel(), kAdminToken));
  ASSERT_TRUE(open.back()->Send(KernelBatch("a", "s3", 1, 1, false)));
  Stream fourth(Channel(), kAdminToken);
  EXPECT_FALSE(fourth.Send(KernelBatch("a", "s4", 1, 1, false)));
  st = fourth.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr("has 3 Ingest streams in progress, its limit (--max-streams 3)"));
  EXPECT_EQ(collector_->Metric("opmap_collector_streams_refused_total"), 2);
  // The open ones still work.
  std::optional<Ack> ack = open[0]->Send(KernelBatch("a", "s0", 2, 1, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 2u);
  for (auto& s : open) EXPECT_TRUE(s->Finish().ok());
}

// Finding 10: incomplete sessions had no memory bound (6 × 999k records added 740 MB).
// Past --max-held-records a batch ends its stream RESOURCE_EXHAUSTED, nothing of it is
// stored, and the same batch is accepted once the held sessions complete.
TEST_F(CollectorHostileTest, IncompleteSessionsOverTheBudgetAreRefusedUntilRoom) {
  StartCollector({"--max-held-records", "1000"});
  Stream holder(Channel(), kAgentToken);
  ASSERT_TRUE(holder.Send(KernelBatch("a", "held", 1, 800, false)));
  Stream over(Channel(), kAgentToken);
  EXPECT_FALSE(over.Send(KernelBatch("a", "second", 1, 300, false)));
  grpc::Status st = over.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(),
              HasSubstr("the collector holds 800 records of incomplete sessions (limit 1000"));
  EXPECT_EQ(collector_->Metric("opmap_collector_budget_refusals_total"), 1);
  // The holder completes: its records leave memory, and the refused batch now fits.
  std::optional<Ack> ack = holder.Send(KernelBatch("a", "held", 2, 0, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 2u);
  EXPECT_TRUE(holder.Finish().ok());
  Stream retry(Channel(), kAgentToken);
  ack = retry.Send(KernelBatch("a", "second", 1, 300, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 1u);
  EXPECT_TRUE(retry.Finish().ok());
  EXPECT_EQ(StoredKernels("held"), 800);
  EXPECT_EQ(StoredKernels("second"), 300);
}

// Sessions filling the budget half received could not finish: every holder's next batch
// was refused (512 fleet windows in flight stopped ingest). An older holder now takes the
// room of younger ones no stream is using; they are rebuilt from the store when they
// continue, and nothing is lost or counted twice. A younger holder still evicts no one.
TEST_F(CollectorHostileTest, AnOlderSessionTakesTheRoomOfYoungerOnesSoTheBudgetCannotDeadlock) {
  StartCollector({"--max-held-records", "1000"});
  Stream a(Channel(), kAgentToken);
  ASSERT_TRUE(a.Send(KernelBatch("a", "older", 1, 600, false)));
  Stream b(Channel(), kAgentToken);
  ASSERT_TRUE(b.Send(KernelBatch("a", "younger", 1, 300, false)));
  // The younger one cannot push the older out: refused, as before.
  EXPECT_FALSE(b.Send(KernelBatch("a", "younger", 2, 300, false)));
  EXPECT_EQ(b.Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(collector_->Metric("opmap_collector_sessions_evicted_for_room_total"), 0);
  // 600 + 300 held, and the older session's next 300 do not fit: the younger is evicted.
  std::optional<Ack> ack = a.Send(KernelBatch("a", "older", 2, 300, false));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 2u);
  EXPECT_EQ(collector_->Metric("opmap_collector_sessions_evicted_for_room_total"), 1);
  ack = a.Send(KernelBatch("a", "older", 3, 0, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 3u);
  EXPECT_TRUE(a.Finish().ok());
  // The younger continues where its acknowledged batch left it.
  Stream again(Channel(), kAgentToken);
  ack = again.Send(KernelBatch("a", "younger", 2, 300, true));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 2u);
  EXPECT_TRUE(again.Finish().ok());
  EXPECT_EQ(StoredKernels("older"), 900);
  EXPECT_EQ(StoredKernels("younger"), 600);
}

// Finding 13: one client dripping a byte a second blocked /metrics (8 of 9 scrapes
// failed). Now 16 such clients are held at once and every scrape still answers.
TEST_F(CollectorHostileTest, SlowMetricsClientsDoNotBlockScrapes) {
  StartCollector();
  const std::string address = collector_->metrics_address();
  const int port = std::atoi(address.substr(address.rfind(':') + 1).c_str());
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    ASSERT_EQ(write(fd, "G", 1), 1);
    slow.push_back(fd);
  }
  int answered = 0;
  for (int i = 0; i < 9; ++i) {
    for (int fd : slow) (void)!write(fd, "E", 1);  // keep dripping
    if (absl::StrContains(HttpGet(address, "/metrics"), "opmap_collector_batches_total")) {
      ++answered;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(answered, 9);
  for (int fd : slow) close(fd);
}

// Finding 15: a damaged WAL after a kill made the collector start silently and answer
// changed data. Now a store that lost acknowledged commits is refused at start, naming
// the file; a store without damage reopens as before.
TEST_F(CollectorHostileTest, LostAcknowledgedCommitsAreRefusedAtStart) {
  StartCollector();
  ASSERT_NO_FATAL_FAILURE(StoreWindows(0, 5));
  collector_->Kill();  // the WAL stays behind, as after a crash
  const std::string wal = collector_->db() + "-wal";
  struct stat st{};
  ASSERT_EQ(stat(wal.c_str(), &st), 0) << "no WAL after the kill";
  // An intact store restarts with everything.
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(StoredKernels("w4"), 50);
  ASSERT_NO_FATAL_FAILURE(StoreWindows(5, 1));
  collector_->Kill();
  ASSERT_EQ(stat(wal.c_str(), &st), 0);
  // Damage the log's tail: the last frames (the last commit) become unreadable.
  const int fd = open(wal.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string junk(4096, '\x5a');
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), st.st_size - 4096), 4096);
  close(fd);
  absl::Status restarted = collector_->Restart();
  EXPECT_FALSE(restarted.ok());
  EXPECT_THAT(collector_->Log(), HasSubstr("were acknowledged"));
  EXPECT_THAT(collector_->Log(), HasSubstr("it is not opened"));
}

// Finding 15, the log's middle: a frame that fails its checksum with the log going on
// after it means SQLite would drop every commit from there on. Refused naming the frame.
TEST_F(CollectorHostileTest, WalDamagedMidLogIsRefusedAtStart) {
  StartCollector();
  ASSERT_NO_FATAL_FAILURE(StoreWindows(0, 5));
  collector_->Kill();
  const std::string wal = collector_->db() + "-wal";
  const int fd = open(wal.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << wal;
  struct stat st{};
  ASSERT_EQ(fstat(fd, &st), 0);
  const off_t frame = 24 + 4096;
  ASSERT_GT(st.st_size, 32 + 4 * frame) << "too few frames to damage one in the middle";
  // The page bytes of frame 2 (its header and salts intact): frames 3.. follow it.
  const std::string junk(512, '\x5a');
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), 32 + frame + 24 + 1024), 512);
  close(fd);
  EXPECT_FALSE(collector_->Restart().ok());
  EXPECT_THAT(collector_->Log(),
              HasSubstr("-wal: frame 2 (offset 4152, page "));
  EXPECT_THAT(collector_->Log(), HasSubstr("fails its checksum and the log continues after it"));
}

// Finding 15, while running: damage found by the periodic check stops ingest (agents keep
// their batches) and refuses queries, instead of answering from changed data.
TEST_F(CollectorHostileTest, DamageFoundWhileRunningStopsIngestAndQueries) {
  StartCollector({"--integrity-check-every", "1s"});
  WellBehavedSessionIsStored("before-damage");
  {
    // The pages are in the write-ahead log so far (not checkpointed yet): overwrite each
    // frame's page bytes, leaving the frame headers, as a failing disk would.
    const std::string wal = collector_->db() + "-wal";
    const int fd = open(wal.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << wal;
    struct stat st{};
    ASSERT_EQ(fstat(fd, &st), 0);
    const off_t frame = 24 + 4096;  // the collector's page size is SQLite's default
    const std::string junk(2048, '\xff');
    for (off_t at = 32; at + frame <= st.st_size; at += frame) {
      ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), at + 24 + 1024), 2048);
    }
    close(fd);
  }
  bool damaged = false;
  for (int i = 0; i < 100 && !damaged; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    damaged = collector_->Metric("opmap_collector_store_damaged") == 1;
  }
  ASSERT_TRUE(damaged) << collector_->Log();
  Stream s(Channel(), kAgentToken);
  EXPECT_FALSE(s.Send(KernelBatch("a", "after-damage", 1, 3, true)));
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(st.error_message(), HasSubstr("the store is damaged"));
  RunResult q = Opmap({"query", "latency", "--collector", collector_->address(), "--token",
                       kAnalystToken},
                      dir_.path());
  EXPECT_NE(q.exit_code, 0);
  EXPECT_THAT(q.err, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(collector_->Log(), HasSubstr("integrity check:"));
}


// Names a workload chose reached analysts' terminals raw through
// `opmap query` (table and CSV). A trace whose operator and kernel carry the probe's
// ESC/OSC sequences, BEL and a line break is imported; every query output shows them
// escaped and keeps one row per row.
TEST_F(CollectorHostileTest, WorkloadNamesReachTheAnalystEscaped) {
  StartCollector();
  const std::string trace = dir_.File("hostile.json");
  WriteFileOrDie(trace, R"({"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "\u001b]0;pwned\u0007aten::mm\nfake row", "pid": 1, "tid": 1, "ts": 1, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 2, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "\u001b[2J\u001b[31mgemm", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 5}}]})");
  RunResult imported = Opmap({"import", trace, "--collector", collector_->address(), "--token",
                              kAgentToken, "--quiet"},
                             dir_.path());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto raw_controls = [](const std::string& out) {
    return std::count_if(out.begin(), out.end(), [](char ch) {
      const unsigned char c = static_cast<unsigned char>(ch);
      return (c < 0x20 && c != '\n') || c == 0x7f;
    });
  };
  for (const std::vector<std::string>& query :
       {std::vector<std::string>{"query", "kernels"},
        std::vector<std::string>{"query", "latency", "--subject", "operator", "--group-by",
                                 "operator"}}) {
    for (const char* format : {"table", "csv"}) {
      std::vector<std::string> args = query;
      args.insert(args.end(), {"--collector", collector_->address(), "--token", kAnalystToken,
                               "--format", format});
      RunResult r = Opmap(args, dir_.path());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(raw_controls(r.out), 0) << query[1] << " " << format << ":\n" << r.out;
      EXPECT_THAT(r.out, HasSubstr(query[1] == "kernels" ? R"(\x1b[2J\x1b[31mgemm)"
                                                         : R"(\x1b]0;pwned\x07aten::mm\nfake row)"))
          << r.out;
      EXPECT_THAT(r.out, ::testing::Not(HasSubstr("\nfake row")));
    }
  }
}


// Each session's sum is checked at ingest (≤ 2^62 ns), the sum across
// sessions was not — three valid sessions of 1,000 kernels of 2^52 ns each gave a total of
// −4,935,945,191,598,064 µs. Sums across sessions now saturate at 2^63 − 1 ns.
TEST_F(CollectorHostileTest, SumsAcrossSessionsSaturateInsteadOfWrapping) {
  StartCollector();
  Stream s(Channel(), kAgentToken);
  for (int i = 0; i < 3; ++i) {
    std::optional<Ack> ack =
        s.Send(KernelBatch("a", absl::StrCat("big", i), 1, 1000, true, int64_t{1} << 52));
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(ack->rejected_size(), 0) << ack->rejected(0).message();
  }
  EXPECT_TRUE(s.Finish().ok());
  const std::string saturated_us = "9223372036854775.807";
  for (const std::vector<std::string>& query :
       {std::vector<std::string>{"query", "kernels"},
        std::vector<std::string>{"query", "latency", "--subject", "kernel"}}) {
    std::vector<std::string> args = query;
    args.insert(args.end(), {"--collector", collector_->address(), "--token", kAnalystToken,
                             "--format", "csv"});
    RunResult r = Opmap(args, dir_.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(saturated_us)) << r.out;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr(",-"))) << "a negative figure: " << r.out;
  }
  // One row per window, with the window's span.
  RunResult w = Opmap({"query", "latency", "--subject", "kernel", "--group-by", "session",
                       "--collector", collector_->address(), "--token", kAnalystToken,
                       "--format", "csv"},
                      dir_.path());
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_THAT(w.out, HasSubstr("session,window_start_ns,window_end_ns,count,")) << w.out;
  EXPECT_THAT(w.out, HasSubstr("a/big0,1700000000")) << w.out;
}


// A batch over the collector's message limit was retried for all of
// --retry-for, then the import exited 1. It can never fit: exit 2 at once, saying why.
TEST_F(CollectorHostileTest, ImportOfABatchThatCannotFitExitsTwoAtOnce) {
  StartCollector({"--max-message-bytes", "65536"});
  const std::string trace = dir_.File("big-name.json");
  const std::string name(100000, 'k');  // one kernel name: the batch is over 64 KiB
  WriteFileOrDie(trace, absl::StrCat(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": ")",
                                     name, R"(", "pid": 0, "tid": 7, "ts": 10, "dur": 2, )",
                                     R"("args": {"device": 0, "stream": 7, "correlation": 5}}]})"));
  const absl::Time start = absl::Now();
  RunResult r = Opmap({"import", trace, "--collector", collector_->address(), "--token",
                       kAgentToken, "--quiet", "--retry-for", "60s"},
                      dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "retried instead of stopping";
  EXPECT_THAT(r.err, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(r.err, HasSubstr("--max-message-bytes"));
  WellBehavedSessionIsStored("after-too-large");
}


// RecordSignoff accepted any printable role (only the CLI checked
// the three). The collector refuses another role, INVALID_ARGUMENT naming the field, and
// records the real one.
TEST_F(CollectorHostileTest, SignoffWithARoleNobodyOwnsIsRefused) {
  StartCollector();
  auto sign = [&](const std::string& role) {
    auto stub = opmap::v1::Query::NewStub(Channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAnalystToken));
    opmap::v1::Signoff s;
    s.set_report_sha256(std::string(64, 'a'));
    s.set_kind("release");
    s.set_owner("mallory");
    s.set_role(role);
    s.set_baseline("base");
    s.set_candidate("cand");
    s.set_verdict("ship");
    opmap::v1::RecordSignoffResponse resp;
    return stub->RecordSignoff(&ctx, s, &resp);
  };
  grpc::Status forged = sign("chief approver of everything");
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(forged.error_message(), HasSubstr("role: 'chief approver of everything'"));
  EXPECT_EQ(sign("compiler").error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "aliases are the CLI's; the wire carries the role's name";
  EXPECT_TRUE(sign("ML compiler engineer").ok());
}

}  // namespace
}  // namespace opmap::testing
