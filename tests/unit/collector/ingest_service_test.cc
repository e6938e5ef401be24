// The Ingest service over a real gRPC channel on 127.0.0.1 with a real SQLite store in
// a temp dir: acks, duplicates, gaps, rejections (nothing of the batch's events stored),
// auth, a failing store, shutdown, eviction, and a restart that re-sends everything.
#include "collector/ingest_service.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/unit/collector/collector_fixture.h"

namespace opmap::collector::test_support {
namespace {

TEST_P(CollectorTest, AcksDuplicatesAndRestartWithoutDuplicates) {
  std::vector<Batch> batches = SessionBatches("s1");
  {
    Collector c(store_);
    IngestStream stream(c.channel(), kAgentToken);
    for (size_t i = 0; i + 1 < batches.size(); ++i) {
      std::optional<Ack> ack = stream.Send(batches[i]);
      ASSERT_TRUE(ack.has_value());
      EXPECT_EQ(ack->agent_id(), "agent-1");
      EXPECT_EQ(ack->session_id(), "s1");
      EXPECT_EQ(ack->durable_seq(), i + 1);
      EXPECT_EQ(ack->rejected_size(), 0);
    }
    // A resent batch: dropped, acked with the session's durable seq.
    std::optional<Ack> dup = stream.Send(batches[1]);
    ASSERT_TRUE(dup.has_value());
    EXPECT_EQ(dup->durable_seq(), 4u);
    EXPECT_EQ(dup->rejected_size(), 0);
    EXPECT_EQ(c.metrics().duplicates.load(), 1);
    EXPECT_EQ(c.metrics().batches.load(), 4);
    EXPECT_TRUE(stream.Finish().ok());
    StoreStats stats = c.store().Stats();
    EXPECT_EQ(stats.batches, 4);
    EXPECT_EQ(stats.sessions_complete, 0);
  }
  // Restart: a new store and server on the same file; the agent resends everything.
  {
    Collector c(store_);
    IngestStream stream(c.channel(), kAgentToken);
    for (size_t i = 0; i < batches.size(); ++i) {
      std::optional<Ack> ack = stream.Send(batches[i]);
      ASSERT_TRUE(ack.has_value());
      EXPECT_EQ(ack->durable_seq(), i + 1 < 5 ? 4u : 5u) << i;
      EXPECT_EQ(ack->rejected_size(), 0);
    }
    for (const Batch& b : batches) {  // and once more, all duplicates
      std::optional<Ack> ack = stream.Send(b);
      ASSERT_TRUE(ack.has_value());
      EXPECT_EQ(ack->durable_seq(), 5u);
    }
    EXPECT_EQ(c.metrics().duplicates.load(), 4 + 5);
    EXPECT_EQ(c.metrics().batches.load(), 1);
    EXPECT_EQ(c.metrics().sessions_complete.load(), 1);
    EXPECT_TRUE(stream.Finish().ok());

    StoreStats stats = c.store().Stats();
    EXPECT_EQ(stats.batches, 5);
    EXPECT_EQ(stats.records, kRecords);
    EXPECT_EQ(stats.sessions_complete, 1);

    // The rollup of the whole session (built from batches 1-4 rebuilt from the store
    // plus batch 5) has every kernel once.
    auto query = opmap::v1::Query::NewStub(c.channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", std::string("Bearer ") + kAnalystToken);
    opmap::v1::TopKernelsRequest request;
    opmap::v1::TopKernelsResponse response;
    grpc::Status status = query->TopKernels(&ctx, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::map<std::string, uint64_t> counts;
    for (const auto& row : response.rows()) counts[row.name()] += row.count();
    EXPECT_EQ(counts["sm90_xmma_gemm_bf16"], 1u);
    EXPECT_EQ(counts["gemm2"], 2u);  // batches 2 (rebuilt from the store) and 5
    EXPECT_EQ(counts["softmax_kernel"], 2u);

    uint64_t events = 0;
    analysis::Trace exported = ExportAll(c.channel(), &events);
    EXPECT_EQ(exported.gpu_events.size(), 6u);
    EXPECT_EQ(exported.api_calls.size(), 5u);
    EXPECT_EQ(exported.ranges.size(), 2u);
    EXPECT_EQ(events, 13u);
  }
}

TEST_P(CollectorTest, RejectsNegativeDurationNamingFieldNothingOfItStored) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s2");
  ASSERT_EQ(batches[1].kernels().dur_ns_size(), 2);
  batches[1].mutable_kernels()->set_dur_ns(1, -5);
  IngestStream stream(c.channel(), kAgentToken);
  std::optional<Ack> ack = stream.Send(batches[0]);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 1u);

  ack = stream.Send(batches[1]);
  ASSERT_TRUE(ack.has_value());
  ASSERT_EQ(ack->rejected_size(), 1);
  const opmap::v1::Rejection& r = ack->rejected(0);
  EXPECT_EQ(r.seq(), 2u);
  EXPECT_EQ(r.field(), "kernels.dur_ns[1]");
  EXPECT_TRUE(absl::StrContains(r.message(), "-5")) << r.message();
  EXPECT_EQ(r.code(), opmap::v1::REJECTION_CODE_INVALID_VALUE);
  EXPECT_EQ(ack->durable_seq(), 2u);  // settled: listed as rejected
  EXPECT_EQ(c.store().Stats().records, analysis::EventRecordCount(batches[0]));
  EXPECT_EQ(c.metrics().rejected(opmap::v1::REJECTION_CODE_INVALID_VALUE), 1);

  // Resending the rejected batch is a duplicate: the rejection stands.
  ack = stream.Send(batches[1]);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 2u);
  EXPECT_EQ(ack->rejected_size(), 0);

  // Batch 5 names "gemm2", which batch 2 defined: the rejected batch's delta still counts.
  for (size_t i = 2; i < batches.size(); ++i) {
    ack = stream.Send(batches[i]);
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->durable_seq(), i + 1);
    EXPECT_EQ(ack->rejected_size(), 0) << ack->rejected(0).message();
  }
  EXPECT_TRUE(stream.Finish().ok());
  StoreStats stats = c.store().Stats();
  EXPECT_EQ(stats.records, kRecords - analysis::EventRecordCount(batches[1]));
  EXPECT_EQ(stats.sessions_complete, 1);

  analysis::Trace exported = ExportAll(c.channel());
  EXPECT_EQ(exported.gpu_events.size(), 4u);  // batch 2's two kernels are not there
  EXPECT_EQ(exported.api_calls.size(), 4u);
  EXPECT_EQ(exported.ranges.size(), 2u);
}

// The store keeps a valid batch's bytes as they came (no re-serialization): here with an
// unknown field first, where serializing the parsed message would put it last. A
// rejected batch stores its remainder instead, and over the stream what the agent sent
// is what is stored.
TEST_P(CollectorTest, ValidBatchIsStoredAsReceived) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("raw");
  const std::string unknown_field = "\xb8\x3e\x07";  // field 999, varint 7
  std::string received = unknown_field + batches[0].SerializeAsString();
  Batch parsed;
  ASSERT_TRUE(parsed.ParseFromString(received));
  ASSERT_NE(parsed.SerializeAsString(), received);
  const std::string expected = received;
  ASSERT_EQ(c.ingest().HandleBatch(parsed, &received)->durable_seq(), 1u);

  Batch bad = batches[1];
  bad.mutable_kernels()->set_dur_ns(0, -5);
  std::string bad_bytes = bad.SerializeAsString();
  absl::StatusOr<Ack> ack = c.ingest().HandleBatch(bad, &bad_bytes);
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->durable_seq(), 2u);

  IngestStream stream(c.channel(), kAgentToken);
  ASSERT_EQ(stream.Send(batches[2])->durable_seq(), 3u);
  EXPECT_TRUE(stream.Finish().ok());

  std::vector<std::string> stored = c.store().LoadSessionPayloads("agent-1", "raw").value();
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0], expected);
  Batch remainder;
  ASSERT_TRUE(remainder.ParseFromString(stored[1]));
  EXPECT_EQ(remainder.seq(), 2u);
  EXPECT_EQ(remainder.kernels().dur_ns_size(), 0);
  EXPECT_EQ(stored[2], batches[2].SerializeAsString());
}

// A rejected batch's remainder is serialized with its labels in key order, whatever
// order they were set in: the same batch resent through another collector stores the
// same bytes, so the ClickHouse engine's block deduplication holds it once.
TEST_P(CollectorTest, RemainderBytesDoNotDependOnLabelOrder) {
  if (GetParam() != "sqlite") {
    GTEST_SKIP() << "the bytes are the ingest service's, not an engine's";
  }
  std::vector<std::string> payloads;
  for (bool reverse : {false, true}) {
    Collector c(absl::StrCat("sqlite:", dir_, reverse ? "/reverse.db" : "/forward.db"));
    std::vector<Batch> batches = SessionBatches("labels");
    ASSERT_EQ(c.ingest().HandleBatch(batches[0])->durable_seq(), 1u);
    Batch bad = batches[1];
    bad.mutable_kernels()->set_dur_ns(0, -5);
    bad.mutable_resource()->clear_labels();
    for (int i = 0; i < 32; ++i) {
      const int k = reverse ? 31 - i : i;
      (*bad.mutable_resource()->mutable_labels())[absl::StrFormat("key-%02d", k)] = "v";
    }
    ASSERT_EQ(c.ingest().HandleBatch(bad)->rejected_size(), 1);
    std::vector<std::string> stored =
        c.store().LoadSessionPayloads("agent-1", "labels").value();
    ASSERT_EQ(stored.size(), 2u);
    payloads.push_back(stored[1]);
  }
  EXPECT_EQ(payloads[0], payloads[1]);
  size_t last = 0;
  for (int k = 0; k < 32; ++k) {
    const size_t at = payloads[0].find(absl::StrFormat("key-%02d", k));
    ASSERT_NE(at, std::string::npos);
    EXPECT_GT(at, last) << "label key-" << k << " out of key order";
    last = at;
  }
}

TEST_P(CollectorTest, GapIsHeldBackUntilResent) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s3");
  IngestStream stream(c.channel(), kAgentToken);
  EXPECT_EQ(stream.Send(batches[0])->durable_seq(), 1u);
  std::optional<Ack> ack = stream.Send(batches[2]);  // seq 3 before seq 2
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->durable_seq(), 1u);
  EXPECT_EQ(ack->rejected_size(), 0);
  EXPECT_EQ(c.metrics().out_of_order.load(), 1);
  EXPECT_EQ(stream.Send(batches[1])->durable_seq(), 2u);
  EXPECT_EQ(stream.Send(batches[2])->durable_seq(), 3u);
  EXPECT_EQ(c.store().Stats().batches, 3);
}

// Alternating gaps made every out-of-order message rebuild the whole
// session from the store (~1.2 s of CPU per two messages on a 5 M-record session). A gap
// now costs one session-row read; the session is rebuilt only when the store moved on.
TEST_P(CollectorTest, GapsDoNotRebuildTheSessionEachTime) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("gaps");
  IngestStream stream(c.channel(), kAgentToken);
  EXPECT_EQ(stream.Send(batches[0])->durable_seq(), 1u);
  EXPECT_EQ(stream.Send(batches[1])->durable_seq(), 2u);
  const int64_t loads = c.flaky().payload_loads.load();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(stream.Send(batches[3 + i % 2])->durable_seq(), 2u);  // seq 4, 5: gaps
  }
  EXPECT_EQ(c.metrics().out_of_order.load(), 50);
  // The held-back batches still land once the missing one comes, on the session as it
  // was held: no rebuild from the store (before, the next in-order batch after a gap
  // replayed the whole session).
  EXPECT_EQ(stream.Send(batches[2])->durable_seq(), 3u);
  EXPECT_EQ(stream.Send(batches[3])->durable_seq(), 4u);
  EXPECT_EQ(stream.Send(batches[4])->durable_seq(), 5u);
  EXPECT_EQ(c.flaky().payload_loads.load(), loads) << "a gap rebuilt the session";
  EXPECT_EQ(c.store().Stats().batches, 5);
}

TEST_P(CollectorTest, IdentityAndEndOfSessionRejections) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s4");
  IngestService& ingest = c.ingest();

  Batch no_agent = batches[0];
  no_agent.clear_agent_id();
  absl::StatusOr<Ack> ack = ingest.HandleBatch(no_agent);
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).field(), "agent_id");
  EXPECT_EQ(ack->rejected(0).code(), opmap::v1::REJECTION_CODE_MISSING_IDENTITY);
  EXPECT_EQ(ack->durable_seq(), 0u);

  Batch seq0 = batches[0];
  seq0.set_seq(0);
  ack = ingest.HandleBatch(seq0);
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).field(), "seq");
  EXPECT_EQ(c.store().Stats().batches, 0);

  for (const Batch& b : batches) ASSERT_EQ(ingest.HandleBatch(b)->durable_seq(), b.seq());
  Batch after = batches[4];
  after.set_seq(6);
  after.set_last_in_session(false);
  ack = ingest.HandleBatch(after);
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).field(), "seq");
  EXPECT_EQ(ack->rejected(0).code(), opmap::v1::REJECTION_CODE_INVALID_VALUE);
  EXPECT_EQ(ack->durable_seq(), 5u);
  EXPECT_EQ(c.store().Stats().batches, 5);
}

TEST_P(CollectorTest, SessionOverRecordLimitIsRejectedTooLarge) {
  IngestOptions options;
  options.max_session_records = 7;
  Collector c(store_, options);
  std::vector<Batch> batches = SessionBatches("s5");
  for (size_t i = 0; i < 2; ++i) ASSERT_EQ(c.ingest().HandleBatch(batches[i])->rejected_size(), 0);
  absl::StatusOr<Ack> ack = c.ingest().HandleBatch(batches[2]);  // 6 + 3 > 7
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->rejected_size(), 1);
  EXPECT_EQ(ack->rejected(0).code(), opmap::v1::REJECTION_CODE_TOO_LARGE);
  EXPECT_EQ(ack->durable_seq(), 3u);
  EXPECT_EQ(c.store().Stats().records, 6);
}

// Both sessions hold part of the budget and need more: the younger is refused and cannot
// push the older out; the older evicts the younger (no handler is using it), finishes, and
// the younger is rebuilt from the store when it continues. Nothing lost, nothing twice.
TEST_P(CollectorTest, AnOlderSessionEvictsAYoungerOneSoBothComplete) {
  IngestOptions options;
  options.max_held_records = 18;  // batches of 3, 3, 3, 3, 1 records
  Collector c(store_, options);
  std::vector<Batch> older = SessionBatches("older"), younger = SessionBatches("younger");
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.ingest().HandleBatch(older[i]).ok());
    ASSERT_TRUE(c.ingest().HandleBatch(younger[i]).ok());
  }
  absl::StatusOr<Ack> refused = c.ingest().HandleBatch(younger[3]);  // 18 + 3 > 18
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(c.metrics().sessions_evicted_for_room.load(), 0);
  absl::StatusOr<Ack> ack = c.ingest().HandleBatch(older[3]);  // evicts the younger (9)
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->durable_seq(), 4u);
  EXPECT_EQ(c.metrics().sessions_evicted_for_room.load(), 1);
  // The younger, rebuilt from the store, would hold 9 + 3 beside the older's 12: its
  // rebuild is admitted like a batch, so refused, and holds nothing. (Held regardless, it
  // would have pushed the older's last batch to evict it a second time.)
  refused = c.ingest().HandleBatch(younger[3]);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  ack = c.ingest().HandleBatch(older[4]);
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->durable_seq(), 5u);
  EXPECT_EQ(c.metrics().sessions_evicted_for_room.load(), 1);
  for (size_t i = 3; i < younger.size(); ++i) {
    ack = c.ingest().HandleBatch(younger[i]);
    ASSERT_TRUE(ack.ok()) << ack.status();
    EXPECT_EQ(ack->durable_seq(), i + 1);
  }
  const StoreStats stats = c.store().Stats();
  EXPECT_EQ(stats.batches, 10);
  EXPECT_EQ(stats.records, 2 * kRecords);
  EXPECT_EQ(stats.sessions_complete, 2);
}

TEST_P(CollectorTest, StoreFailureEndsStreamUnavailableThenResendWorks) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s6");
  {
    IngestStream stream(c.channel(), kAgentToken);
    EXPECT_EQ(stream.Send(batches[0])->durable_seq(), 1u);
    EXPECT_EQ(stream.Send(batches[1])->durable_seq(), 2u);
    c.flaky().fail_commits = true;
    EXPECT_FALSE(stream.Send(batches[2]).has_value());  // no ack
    grpc::Status status = stream.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_TRUE(absl::StrContains(status.error_message(), "disk on fire")) << status.error_message();
  }
  c.flaky().fail_commits = false;
  IngestStream stream(c.channel(), kAgentToken);
  for (size_t i = 2; i < batches.size(); ++i) {
    EXPECT_EQ(stream.Send(batches[i])->durable_seq(), i + 1);
  }
  EXPECT_TRUE(stream.Finish().ok());
  StoreStats stats = c.store().Stats();
  EXPECT_EQ(stats.batches, 5);
  EXPECT_EQ(stats.records, kRecords);
  EXPECT_EQ(stats.sessions_complete, 1);
  EXPECT_EQ(c.metrics().store_errors.load(), 1);
}

TEST_P(CollectorTest, ConcurrentStreamsResendingTheSameSessions) {
  Collector c(store_);
  std::vector<std::vector<Batch>> sessions;
  for (int s = 0; s < 3; ++s) sessions.push_back(SessionBatches("c" + std::to_string(s)));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      IngestStream stream(c.channel(), kAgentToken);
      for (size_t i = 0; i < 5; ++i) {
        for (size_t s = 0; s < sessions.size(); ++s) {
          std::optional<Ack> ack = stream.Send(sessions[(s + t) % sessions.size()][i]);
          // Another stream may be ahead; never behind what this one sent.
          if (!ack || ack->durable_seq() < i + 1 || ack->rejected_size() != 0) ++failures;
        }
      }
      if (!stream.Finish().ok()) ++failures;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  StoreStats stats = c.store().Stats();
  EXPECT_EQ(stats.batches, 15);
  EXPECT_EQ(stats.records, 3 * kRecords);
  EXPECT_EQ(stats.sessions_complete, 3);
  EXPECT_EQ(c.metrics().duplicates.load(), 3 * 15);
}

TEST_P(CollectorTest, TokensAreChecked) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s7");
  {
    IngestStream stream(c.channel(), nullptr);
    EXPECT_FALSE(stream.Send(batches[0]).has_value());
    grpc::Status status = stream.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_TRUE(absl::StartsWith(status.error_message(), "missing token"));
  }
  {
    IngestStream stream(c.channel(), "agent-token-wrong-0000");
    EXPECT_FALSE(stream.Send(batches[0]).has_value());
    grpc::Status status = stream.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(status.error_message(), "unknown token");
  }
  {
    IngestStream stream(c.channel(), kAnalystToken);
    EXPECT_FALSE(stream.Send(batches[0]).has_value());
    grpc::Status status = stream.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(status.error_message(), "token 'alice' has role analyst; ingest needs agent or admin");
  }
  {
    auto query = opmap::v1::Query::NewStub(c.channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", std::string("Bearer ") + kAgentToken);
    opmap::v1::TopKernelsResponse response;
    grpc::Status status = query->TopKernels(&ctx, {}, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    auto query = opmap::v1::Query::NewStub(c.channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", std::string("Bearer ") + kAnalystToken);
    opmap::v1::TopKernelsRequest request;
    request.mutable_range()->set_start_ns(10);
    request.mutable_range()->set_end_ns(5);
    opmap::v1::TopKernelsResponse response;
    grpc::Status status = query->TopKernels(&ctx, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StartsWith(status.error_message(), "range.end_ns")) << status.error_message();
  }
  EXPECT_EQ(c.store().Stats().batches, 0);
  EXPECT_EQ(c.metrics().auth_failures.load(), 4);
}

TEST_P(CollectorTest, ShutdownCancelsOpenStreams) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s8");
  IngestStream stream(c.channel(), kAgentToken);
  EXPECT_EQ(stream.Send(batches[0])->durable_seq(), 1u);
  c.ingest().BeginShutdown();
  grpc::Status status = stream.Finish();
  EXPECT_FALSE(status.ok());
  IngestStream late(c.channel(), kAgentToken);
  EXPECT_FALSE(late.Send(batches[1]).has_value());
  EXPECT_EQ(late.Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(c.store().Stats().batches, 1);
}

TEST_P(CollectorTest, EvictedSessionIsRebuiltFromTheStore) {
  Collector c(store_);
  std::vector<Batch> batches = SessionBatches("s9");
  for (size_t i = 0; i < 3; ++i) ASSERT_EQ(c.ingest().HandleBatch(batches[i])->durable_seq(), i + 1);
  EXPECT_EQ(c.ingest().sessions_in_memory(), 1u);
  EXPECT_EQ(c.ingest().EvictIdle(absl::Now() + absl::Seconds(1)), 1u);
  EXPECT_EQ(c.ingest().sessions_in_memory(), 0u);
  EXPECT_EQ(c.ingest().HandleBatch(batches[3])->durable_seq(), 4u);
  EXPECT_EQ(c.ingest().HandleBatch(batches[4])->durable_seq(), 5u);
  StoreStats stats = c.store().Stats();
  EXPECT_EQ(stats.records, kRecords);
  EXPECT_EQ(stats.sessions_complete, 1);
}

// Every TEST_P(CollectorTest, ...) of this binary (ingest and query suites) runs on both.
OPMAP_INSTANTIATE_ENGINES(CollectorTest);

}  // namespace
}  // namespace opmap::collector::test_support
