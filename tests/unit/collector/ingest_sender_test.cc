// client/ingest_sender.h against a real collector in this process (IngestService over
// gRPC on 127.0.0.1, a SQLite store in a temp dir): every batch settled exactly once and
// in order per session, the window bound, reconnecting when the store fails (and telling
// the caller the stream broke), fatal refusals and giving up.
#include "client/ingest_sender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/unit/collector/collector_fixture.h"

namespace opmap::client {
namespace {

using collector::test_support::Collector;
using collector::test_support::CollectorTest;
using collector::test_support::kAgentToken;
using collector::test_support::SessionBatches;
using opmap::v1::Batch;

// What the callbacks saw.
struct Seen {
  std::mutex mu;
  std::map<std::string, std::vector<uint64_t>> settled;  // session → seqs, in call order
  int broken = 0;
};

SenderOptions Options(Seen* seen) {
  SenderOptions o;
  o.window = 2;
  o.initial_backoff = absl::Milliseconds(20);
  o.max_backoff = absl::Milliseconds(100);
  o.retry_for = absl::Seconds(20);
  o.on_settled = [seen](const std::string& agent, const std::string& session, uint64_t seq) {
    std::lock_guard<std::mutex> lock(seen->mu);
    EXPECT_EQ(agent, "agent-1");
    seen->settled[session].push_back(seq);
  };
  o.on_stream_broken = [seen] {
    std::lock_guard<std::mutex> lock(seen->mu);
    ++seen->broken;
  };
  return o;
}

std::unique_ptr<CollectorChannel> Channel(const std::string& address, const std::string& token) {
  ChannelOptions options;
  options.collectors = {address};
  options.token = token;
  absl::StatusOr<std::unique_ptr<CollectorChannel>> c = CollectorChannel::Create(options);
  EXPECT_TRUE(c.ok()) << c.status();
  return std::move(*c);
}

// The batches of two sessions, interleaved: s1#1, s2#1, s1#2, ...
std::vector<Batch> TwoSessions() {
  std::vector<Batch> a = SessionBatches("s1"), b = SessionBatches("s2"), out;
  for (size_t i = 0; i < a.size(); ++i) {
    out.push_back(a[i]);
    out.push_back(b[i]);
  }
  return out;
}

std::function<bool(Batch*)> From(const std::vector<Batch>& batches, size_t* next) {
  return [&batches, next](Batch* out) {
    if (*next >= batches.size()) return false;
    *out = batches[(*next)++];
    return true;
  };
}

TEST_P(CollectorTest, SenderSettlesEveryBatchOnceInOrderPerSession) {
  Collector c(store_);
  std::unique_ptr<CollectorChannel> channel = Channel(c.address(), kAgentToken);
  Seen seen;
  SenderOptions options = Options(&seen);
  int max_unsettled = 0;
  options.progress_interval = absl::ZeroDuration();
  options.progress = [&](const SenderProgress& p) {
    max_unsettled = std::max<int>(max_unsettled, static_cast<int>(p.pulled - p.settled));
  };
  const std::vector<Batch> batches = TwoSessions();
  size_t next = 0;
  SenderResult r = IngestSender(channel.get(), options).Run(From(batches, &next));
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.progress.pulled, 10);
  EXPECT_EQ(r.progress.settled, 10);
  EXPECT_EQ(r.progress.rejected, 0);
  EXPECT_EQ(r.progress.resent, 0);
  EXPECT_EQ(r.progress.reconnects, 0);
  EXPECT_TRUE(r.progress.source_done);
  EXPECT_LE(max_unsettled, 2);  // the window
  const std::vector<uint64_t> in_order = {1, 2, 3, 4, 5};
  EXPECT_EQ(seen.settled["s1"], in_order);
  EXPECT_EQ(seen.settled["s2"], in_order);
  EXPECT_EQ(seen.broken, 0);
  for (const char* s : {"s1", "s2"}) {
    absl::StatusOr<collector::SessionState> state = c.store().GetSession("agent-1", s);
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(state->last_seq, 5u) << s;
  }
  // Sending the same batches again stores nothing new and settles each one again.
  next = 0;
  seen.settled.clear();
  r = IngestSender(channel.get(), options).Run(From(batches, &next));
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.progress.settled, 10);
  EXPECT_EQ(seen.settled["s1"], in_order);
  EXPECT_EQ(c.metrics().batches.load(), 10);
}

TEST_P(CollectorTest, SenderReconnectsWhileTheStoreFailsThenStoresEachBatchOnce) {
  Collector c(store_);
  std::unique_ptr<CollectorChannel> channel = Channel(c.address(), kAgentToken);
  Seen seen;
  c.flaky().fail_commits = true;
  std::thread heal([&] {
    absl::SleepFor(absl::Milliseconds(400));
    c.flaky().fail_commits = false;
  });
  const std::vector<Batch> batches = SessionBatches("s1");
  size_t next = 0;
  std::vector<std::string> log;
  SenderOptions options = Options(&seen);
  options.log = [&](const std::string& line) { log.push_back(line); };
  SenderResult r = IngestSender(channel.get(), options).Run(From(batches, &next));
  heal.join();
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_GE(r.progress.reconnects, 1);
  EXPECT_GE(r.progress.resent, 1);  // the batch the failing store refused went again
  EXPECT_EQ(r.progress.settled, 5);
  EXPECT_EQ(seen.settled["s1"], (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  // The caller heard of every break (the agent's outbox spills to disk there).
  EXPECT_EQ(seen.broken, r.progress.reconnects);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.front().find("stream ended (UNAVAILABLE"), std::string::npos) << log.front();
  EXPECT_EQ(c.store().GetSession("agent-1", "s1")->last_seq, 5u);
  EXPECT_EQ(c.metrics().batches.load(), 5);
}

TEST_P(CollectorTest, SenderWithAWrongTokenEndsTheRunAtOnce) {
  Collector c(store_);
  std::unique_ptr<CollectorChannel> channel = Channel(c.address(), "not-a-token-0123456789");
  Seen seen;
  const std::vector<Batch> batches = SessionBatches("s1");
  size_t next = 0;
  const absl::Time start = absl::Now();
  SenderResult r = IngestSender(channel.get(), Options(&seen)).Run(From(batches, &next));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << r.status.error_message();
  EXPECT_EQ(r.progress.reconnects, 0);
  EXPECT_EQ(r.progress.settled, 0);
  EXPECT_EQ(seen.broken, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // not the 20 s retry_for
  EXPECT_EQ(c.store().GetSession("agent-1", "s1")->last_seq, 0u);
}

TEST_P(CollectorTest, SenderGivesUpAfterRetryForWithoutProgress) {
  // A port nothing listens on (a collector is created and destroyed to free one).
  std::string address;
  {
    Collector c(store_);
    address = c.address();
  }
  std::unique_ptr<CollectorChannel> channel = Channel(address, kAgentToken);
  Seen seen;
  SenderOptions options = Options(&seen);
  options.retry_for = absl::Milliseconds(600);
  const std::vector<Batch> batches = SessionBatches("s1");
  size_t next = 0;
  SenderResult r = IngestSender(channel.get(), options).Run(From(batches, &next));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(r.status.error_message().find("gave up after"), std::string::npos)
      << r.status.error_message();
  EXPECT_GE(r.progress.reconnects, 1);
  EXPECT_EQ(r.progress.settled, 0);
  EXPECT_LE(r.progress.pulled, 2);  // never more than the window in memory
  EXPECT_EQ(seen.broken, r.progress.reconnects);
}

}  // namespace
}  // namespace opmap::client
