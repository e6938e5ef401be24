// Outbox: order, acks, memory → spool spill, drops at the caps, segment deletion, Rewind.
#include "agent/spool/outbox.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "agent/spool/spool_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/spool/spool_test_util.h"

namespace opmap::agent::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A one-character session id per batch number: the cap tests drop batches, and a session
// that loses one loses the rest too (DropsTheRestOfASessionThatLostABatch), so each batch
// there is a session of its own.
std::string Solo(uint64_t q) {
  static constexpr char kIds[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return std::string(1, kIds[q % (sizeof(kIds) - 1)]);
}

absl::Status PushOne(Outbox& o, const std::string& session, uint64_t seq,
                     size_t size = kPayload) {
  return o.Push({session, seq}, BatchBytes(session, seq, size));
}

TEST_F(SpoolTest, TwoSessionsKeepPushOrderAndAcksAreCumulativePerSession) {
  auto o = OpenOrDie(Options(1 << 20));
  for (auto [s, q] : std::vector<std::pair<std::string, uint64_t>>{
           {"A", 1}, {"B", 1}, {"A", 2}, {"B", 2}, {"A", 3}}) {
    ASSERT_TRUE(PushOne(*o, s, q).ok());
  }
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/1", "B/1", "A/2", "B/2", "A/3"));

  ASSERT_TRUE(o->Ack("A", 2).ok());
  EXPECT_EQ(o->stats().memory_batches, 3u);
  EXPECT_EQ(o->stats().memory_bytes, 3 * kPayload);
  o->Rewind();
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("B/1", "B/2", "A/3"));

  ASSERT_TRUE(o->Ack("B", 7).ok());  // past the last pushed: all of B
  ASSERT_TRUE(o->Ack("nobody", 3).ok());
  o->Rewind();
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/3"));
  ASSERT_TRUE(o->Ack("A", 3).ok());
  ASSERT_TRUE(o->Ack("A", 3).ok());  // repeated after a reconnect: harmless
  o->Rewind();
  EXPECT_THAT(Drain(*o, kPayload), IsEmpty());
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.pushed_batches, 5u);
  EXPECT_EQ(st.acked_batches, 5u);
  EXPECT_EQ(st.acked_bytes, 5 * kPayload);
  EXPECT_EQ(st.memory_batches, 0u);
  EXPECT_EQ(st.memory_bytes, 0u);
  EXPECT_EQ(st.spool_batches, 0u);
  EXPECT_EQ(st.dropped_batches, 0u);
}

TEST_F(SpoolTest, PushRejectsBadKeys) {
  auto o = OpenOrDie(Options(1 << 20));
  EXPECT_TRUE(absl::IsInvalidArgument(PushOne(*o, "", 1)));
  EXPECT_TRUE(absl::IsInvalidArgument(PushOne(*o, "A", 0)));
  EXPECT_TRUE(absl::IsInvalidArgument(PushOne(*o, std::string(kMaxSessionIdBytes + 1, 'x'), 1)));
  ASSERT_TRUE(PushOne(*o, "A", 5).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(PushOne(*o, "A", 5)));
  EXPECT_TRUE(absl::IsInvalidArgument(PushOne(*o, "A", 4)));
  EXPECT_TRUE(PushOne(*o, "A", 9).ok());  // gaps are the producer's business
  EXPECT_EQ(o->stats().pushed_batches, 2u);
}

TEST_F(SpoolTest, SpillsOldestToDiskWhenMemoryIsFull) {
  auto o = OpenOrDie(Options(3 * kPayload));
  for (uint64_t q = 1; q <= 5; ++q) ASSERT_TRUE(PushOne(*o, "A", q).ok());
  OutboxStats st = o->stats();
  EXPECT_EQ(st.memory_batches, 3u);
  EXPECT_EQ(st.memory_bytes, 3 * kPayload);
  EXPECT_EQ(st.spool_batches, 2u);
  EXPECT_EQ(st.spool_batch_bytes, 2 * kPayload);
  EXPECT_EQ(st.spilled_batches, 2u);
  EXPECT_EQ(st.spool_bytes, 2 * kRecord);
  EXPECT_EQ(SegmentBytesOnDisk(dir_), 2 * kRecord);
  // A batch larger than all of memory goes straight to disk, after everything older.
  ASSERT_TRUE(PushOne(*o, "A", 6, 4 * kPayload).ok());
  st = o->stats();
  EXPECT_EQ(st.memory_batches, 0u);
  EXPECT_EQ(st.spool_batches, 6u);
  EXPECT_EQ(st.spool_bytes, 5 * kRecord + SpoolRecordSize(1, 4 * kPayload));

  std::vector<OutboxItem> items = Drain(*o, kPayload, /*big_from=*/6, 4 * kPayload);
  ASSERT_EQ(items.size(), 6u);
  EXPECT_THAT(Keys(items), ElementsAre("A/1", "A/2", "A/3", "A/4", "A/5", "A/6"));
  ASSERT_TRUE(o->Ack("A", 6).ok());
  st = o->stats();
  EXPECT_EQ(st.spool_batches, 0u);
  EXPECT_EQ(st.spool_bytes, 0u);
  EXPECT_EQ(SegmentBytesOnDisk(dir_), 0u);
}

TEST_F(SpoolTest, WithoutSpoolDirTheOldestInMemoryIsDroppedAndCounted) {
  OutboxOptions opt = Options(3 * kPayload);
  opt.spool_dir.clear();
  auto o = OpenOrDie(opt);
  for (uint64_t q = 1; q <= 5; ++q) ASSERT_TRUE(PushOne(*o, Solo(q), 1).ok());
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.dropped_batches, 2u);
  EXPECT_EQ(st.dropped_bytes, 2 * kPayload);
  EXPECT_EQ(st.memory_batches, 3u);
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("d/1", "e/1", "f/1"));
  // One batch larger than all of memory cannot be kept at all: it alone is dropped.
  EXPECT_TRUE(absl::IsResourceExhausted(PushOne(*o, "Z", 7, 4 * kPayload)));
  EXPECT_EQ(o->stats().dropped_batches, 3u);
  EXPECT_EQ(o->stats().dropped_bytes, 6 * kPayload);
  EXPECT_EQ(o->stats().memory_batches, 3u);
}

TEST_F(SpoolTest, FullSpoolDropsOldestSegmentCountedAndNeverExceedsTheCap) {
  OutboxOptions opt = Options(0);  // everything goes to disk
  opt.segment_bytes = 4 * kRecord;  // 4 records a segment
  opt.spool_bytes = 12 * kRecord;   // 3 segments
  auto o = OpenOrDie(opt);
  for (uint64_t q = 1; q <= 30; ++q) {
    ASSERT_TRUE(PushOne(*o, Solo(q), 1).ok()) << q;
    ASSERT_LE(o->stats().spool_bytes, opt.spool_bytes) << q;
    ASSERT_LE(SegmentBytesOnDisk(dir_), opt.spool_bytes) << q;
  }
  // Pushes 13, 17, 21, 25 and 29 each needed room: the oldest segment (4 batches) went.
  OutboxStats st = o->stats();
  EXPECT_EQ(st.dropped_batches, 20u);
  EXPECT_EQ(st.dropped_bytes, 20 * kPayload);
  EXPECT_EQ(st.spool_batches, 10u);
  EXPECT_EQ(st.spool_bytes, 10 * kRecord);
  EXPECT_EQ(SegmentFiles(dir_).size(), 3u);
  std::vector<OutboxItem> items = Drain(*o, kPayload);
  ASSERT_EQ(items.size(), 10u);
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].key.session_id, Solo(21 + i));
  // Acks for dropped batches are fine; the drop counts survive a restart.
  for (uint64_t q = 1; q <= 22; ++q) ASSERT_TRUE(o->Ack(Solo(q), 1).ok());
  o.reset();
  o = OpenOrDie(opt);
  st = o->stats();
  EXPECT_EQ(st.dropped_batches, 20u);
  EXPECT_EQ(st.dropped_bytes, 20 * kPayload);
  EXPECT_EQ(st.recovered_batches, 8u);
  EXPECT_EQ(st.recovered_acked_skipped, 2u);
}

TEST_F(SpoolTest, ReopeningWithASmallerCapDropsOldestSegmentsAtOnce) {
  OutboxOptions opt = Options(0);
  opt.segment_bytes = 4 * kRecord;
  {
    auto o = OpenOrDie(opt);
    for (uint64_t q = 1; q <= 12; ++q) ASSERT_TRUE(PushOne(*o, Solo(q), 1).ok());
  }
  opt.spool_bytes = 5 * kRecord;
  auto o = OpenOrDie(opt);
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.dropped_batches, 8u);
  EXPECT_EQ(st.dropped_bytes, 8 * kPayload);
  EXPECT_EQ(st.spool_bytes, 4 * kRecord);
  EXPECT_EQ(SegmentBytesOnDisk(dir_), 4 * kRecord);
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("j/1", "k/1", "l/1", "m/1"));
}

TEST_F(SpoolTest, BatchLargerThanTheSpoolIsDroppedAndCounted) {
  OutboxOptions opt = Options(0);
  opt.spool_bytes = 2 * kRecord;
  auto o = OpenOrDie(opt);
  ASSERT_TRUE(PushOne(*o, "A", 1).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(PushOne(*o, "B", 1, 3 * kPayload)));
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.dropped_batches, 1u);
  EXPECT_EQ(st.dropped_bytes, 3 * kPayload);
  EXPECT_EQ(st.spool_batches, 1u);
  EXPECT_EQ(st.memory_batches, 0u);
}

// The collector stores a session's batches only in seq order (a gap is never stored), so a
// session that lost a batch to the cap can never deliver the rest: they are dropped and
// counted too, now and when pushed later, and not resent after a restart.
TEST_F(SpoolTest, DropsTheRestOfASessionThatLostABatch) {
  OutboxOptions opt = Options(0);   // everything goes to disk
  opt.segment_bytes = 2 * kRecord;  // 2 records a segment
  opt.spool_bytes = 4 * kRecord;    // 2 segments
  {
    auto o = OpenOrDie(opt);
    ASSERT_TRUE(PushOne(*o, "A", 1).ok());
    ASSERT_TRUE(PushOne(*o, "B", 1).ok());  // segment 1: A/1 B/1
    ASSERT_TRUE(PushOne(*o, "A", 2).ok());
    ASSERT_TRUE(PushOne(*o, "C", 1).ok());  // segment 2: A/2 C/1
    // C/2 needs room: segment 1 goes (A/1, B/1), and with A/1 the rest of A (A/2).
    ASSERT_TRUE(PushOne(*o, "C", 2).ok());
    OutboxStats st = o->stats();
    EXPECT_EQ(st.dropped_batches, 3u);
    EXPECT_EQ(st.dropped_bytes, 3 * kPayload);
    EXPECT_TRUE(absl::IsResourceExhausted(PushOne(*o, "A", 3)));  // A can never complete
    EXPECT_TRUE(absl::IsResourceExhausted(PushOne(*o, "B", 2)));
    st = o->stats();
    EXPECT_EQ(st.dropped_batches, 5u);
    EXPECT_EQ(st.spool_batches, 2u);
    EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("C/1", "C/2"));
  }
  // A/2 is still inside segment 2 on disk: a restart must not bring it back.
  auto o = OpenOrDie(opt);
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("C/1", "C/2"));
}

TEST_F(SpoolTest, SegmentsAreDeletedOnceAllTheirRecordsAreAcked) {
  OutboxOptions opt = Options(0);
  opt.segment_bytes = 4 * kRecord;
  auto o = OpenOrDie(opt);
  for (uint64_t q = 1; q <= 10; ++q) ASSERT_TRUE(PushOne(*o, "A", q).ok());
  std::vector<std::filesystem::path> files = SegmentFiles(dir_);
  ASSERT_EQ(files.size(), 3u);  // 4 + 4 + 2 records

  ASSERT_TRUE(o->Ack("A", 3).ok());  // part of the first segment: it stays
  EXPECT_EQ(SegmentFiles(dir_).size(), 3u);
  ASSERT_TRUE(o->Ack("A", 4).ok());  // the rest of it: it goes
  EXPECT_FALSE(std::filesystem::exists(files[0]));
  EXPECT_EQ(SegmentFiles(dir_).size(), 2u);
  EXPECT_EQ(o->stats().spool_bytes, 6 * kRecord);
  ASSERT_TRUE(o->Ack("A", 6).ok());  // half of the second
  EXPECT_EQ(o->stats().spool_bytes, 6 * kRecord);
  EXPECT_EQ(o->stats().spool_batches, 4u);

  // The partial ack is in the state file: a restart skips A/5 and A/6.
  o.reset();
  o = OpenOrDie(opt);
  OutboxStats st = o->stats();
  EXPECT_EQ(st.recovered_batches, 4u);
  EXPECT_EQ(st.recovered_acked_skipped, 2u);
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/7", "A/8", "A/9", "A/10"));
  ASSERT_TRUE(o->Ack("A", 10).ok());
  EXPECT_THAT(SegmentFiles(dir_), IsEmpty());
  EXPECT_EQ(o->stats().spool_bytes, 0u);
}

TEST_F(SpoolTest, RewindResendsEveryUnackedBatchInOrderFromMemoryAndDisk) {
  auto o = OpenOrDie(Options(2 * kPayload));
  const std::vector<std::pair<std::string, uint64_t>> keys = {
      {"A", 1}, {"B", 1}, {"A", 2}, {"B", 2}, {"A", 3}, {"B", 3}};
  for (auto [s, q] : keys) ASSERT_TRUE(PushOne(*o, s, q).ok());
  ASSERT_EQ(o->stats().spool_batches, 4u);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(o->NextUnsent().ok());
  ASSERT_TRUE(o->Ack("A", 1).ok());
  ASSERT_TRUE(o->Ack("B", 1).ok());
  o->Rewind();  // the stream broke: A/2 and B/2 were sent but not acked
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/2", "B/2", "A/3", "B/3"));
  o->Rewind();
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/2", "B/2", "A/3", "B/3"));
  EXPECT_FALSE(o->WaitForUnsent(absl::Milliseconds(1)));
  ASSERT_TRUE(PushOne(*o, "A", 4).ok());
  EXPECT_TRUE(o->WaitForUnsent(absl::Milliseconds(1)));
}

TEST_F(SpoolTest, ProducersAndSenderConcurrentlyLoseNothing) {
  OutboxOptions opt = Options(8 * kPayload);
  opt.segment_bytes = 16 * kRecord;
  auto o = OpenOrDie(opt);
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 300;
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      const std::string s(1, static_cast<char>('a' + t));
      for (uint64_t q = 1; q <= kPerThread; ++q) EXPECT_TRUE(PushOne(*o, s, q).ok());
    });
  }
  std::map<std::string, uint64_t> last;
  uint64_t received = 0;
  while (received < kThreads * kPerThread) {
    if (!o->WaitForUnsent(absl::Seconds(10))) break;
    absl::StatusOr<std::optional<OutboxItem>> item = o->NextUnsent();
    ASSERT_TRUE(item.ok()) << item.status();
    if (!item->has_value()) continue;
    const OutboxKey& k = (*item)->key;
    ASSERT_EQ(k.seq, last[k.session_id] + 1) << k.session_id;  // in order, none missing
    ASSERT_EQ((*item)->bytes, BatchBytes(k.session_id, k.seq, kPayload));
    last[k.session_id] = k.seq;
    ++received;
    ASSERT_TRUE(o->Ack(k.session_id, k.seq).ok());
  }
  for (auto& p : producers) p.join();
  EXPECT_EQ(received, kThreads * kPerThread);
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.acked_batches, kThreads * kPerThread);
  EXPECT_EQ(st.dropped_batches, 0u);
  EXPECT_EQ(st.memory_batches + st.spool_batches, 0u);
}

// Not a check: prints push+ack throughput while spilling. Run with
//   build/tests/spool_test --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
TEST_F(SpoolTest, DISABLED_ThroughputSpilling10kx64KiB) {
  for (bool fsync : {false, true}) {
    std::filesystem::remove_all(dir_);
    OutboxOptions opt = Options(4 << 20);  // 64 batches in memory, the rest spilled
    opt.fsync = fsync;
    opt.state_write_interval = absl::Seconds(1);
    auto o = OpenOrDie(opt);
    constexpr size_t kBig = 64 << 10;
    constexpr uint64_t kN = 10000;
    const std::string bytes = BatchBytes("A", 1, kBig);
    const auto start = std::chrono::steady_clock::now();
    for (uint64_t q = 1; q <= kN; ++q) ASSERT_TRUE(o->Push({"A", q}, bytes).ok());
    const auto pushed = std::chrono::steady_clock::now();
    for (uint64_t q = 1; q <= kN; ++q) {
      absl::StatusOr<std::optional<OutboxItem>> item = o->NextUnsent();
      ASSERT_TRUE(item.ok() && item->has_value());
      ASSERT_TRUE(o->Ack("A", (*item)->key.seq).ok());
    }
    const auto done = std::chrono::steady_clock::now();
    const double push_s = std::chrono::duration<double>(pushed - start).count();
    const double all_s = std::chrono::duration<double>(done - start).count();
    const double mib = kN * kBig / double(1 << 20);
    std::printf("fsync=%d: spilled %llu; push %.2f s (%.0f MiB/s), push+read+ack %.2f s "
                "(%.0f batches/s, %.0f MiB/s)\n",
                fsync, static_cast<unsigned long long>(o->stats().spilled_batches), push_s,
                mib / push_s, all_s, kN / all_s, mib / all_s);
  }
}

}  // namespace
}  // namespace opmap::agent::testing
