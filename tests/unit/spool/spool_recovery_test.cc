// Outbox recovery: SIGKILL at any time loses nothing spooled; damaged bytes (torn tail,
// flipped bits) are skipped and counted, never delivered.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/spool/outbox.h"
#include "agent/spool/spool_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/spool/spool_test_util.h"

namespace opmap::agent::testing {
namespace {

using ::testing::ElementsAre;

// Batch i of a run: sessions A and B alternate, each with seqs 1, 2, ...
OutboxKey KeyOf(int i) { return {i % 2 ? "B" : "A", static_cast<uint64_t>(i / 2 + 1)}; }

// Runs `body` in a forked child that then SIGKILLs itself: no Close, no flush — as when
// the agent is killed (`body` leaks its Outbox so that no destructor runs either).
// Returns false if the child failed before that.
template <typename F>
bool RunAndKill(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!body()) _exit(1);
    kill(getpid(), SIGKILL);
    _exit(2);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

void FlipByte(const std::filesystem::path& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x20));
}

TEST_F(SpoolTest, SigkillKeepsEverySpooledUnackedBatchExactlyOnce) {
  // Memory holds 4 batches: of 20 pushed, the first 16 are spooled, the last 4 only in
  // memory (lost to the SIGKILL, by design). A/1..A/3 are acked before the kill.
  const OutboxOptions opt = Options(4 * kPayload);
  ASSERT_TRUE(RunAndKill([&] {
    absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(opt);
    if (!o.ok()) return false;
    for (int i = 0; i < 20; ++i) {
      OutboxKey k = KeyOf(i);
      if (!(*o)->Push(k, BatchBytes(k.session_id, k.seq, kPayload)).ok()) return false;
    }
    const bool ok = (*o)->Ack("A", 3).ok();
    o->release();  // a SIGKILL runs no destructor (which would Close and spill)
    return ok;
  }));
  auto o = OpenOrDie(opt);
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.recovered_batches, 13u);
  EXPECT_EQ(st.recovered_bytes, 13 * kPayload);
  EXPECT_EQ(st.recovered_acked_skipped, 3u);
  EXPECT_EQ(st.torn_records_discarded, 0u);
  EXPECT_EQ(st.spool_batches, 13u);
  EXPECT_THAT(Keys(Drain(*o, kPayload)),
              ElementsAre("B/1", "B/2", "B/3", "A/4", "B/4", "A/5", "B/5", "A/6", "B/6",
                          "A/7", "B/7", "A/8", "B/8"));
  // The session's seq carries on after recovery.
  EXPECT_TRUE(absl::IsInvalidArgument(o->Push({"B", 8}, "x")));
  EXPECT_TRUE(o->Push({"B", 9}, "x").ok());
}

TEST_F(SpoolTest, SpillBeforeSigkillKeepsTheMemoryPartToo) {
  const OutboxOptions opt = Options(4 * kPayload);
  ASSERT_TRUE(RunAndKill([&] {
    absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(opt);
    if (!o.ok()) return false;
    for (int i = 0; i < 20; ++i) {
      OutboxKey k = KeyOf(i);
      if (!(*o)->Push(k, BatchBytes(k.session_id, k.seq, kPayload)).ok()) return false;
    }
    const bool ok = (*o)->Ack("A", 3).ok() && (*o)->Spill().ok();
    o->release();
    return ok;
  }));
  auto o = OpenOrDie(opt);
  EXPECT_EQ(o->stats().recovered_batches, 17u);
  std::vector<OutboxItem> items = Drain(*o, kPayload);
  ASSERT_EQ(items.size(), 17u);
  EXPECT_EQ(Keys(items).front(), "B/1");
  EXPECT_EQ(Keys(items).back(), "B/10");
  // Reopened again without acks: the same 17, not one more.
  o.reset();
  o = OpenOrDie(opt);
  EXPECT_EQ(Drain(*o, kPayload).size(), 17u);
}

TEST_F(SpoolTest, TornTailIsDiscardedAndCountedTheRestIntact) {
  const OutboxOptions opt = Options(0);
  {
    auto o = OpenOrDie(opt);
    for (uint64_t q = 1; q <= 10; ++q) ASSERT_TRUE(o->Push({"A", q}, BatchBytes("A", q, kPayload)).ok());
  }
  auto files = SegmentFiles(dir_);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(std::filesystem::file_size(files[0]), 10 * kRecord);
  std::filesystem::resize_file(files[0], 10 * kRecord - 500);  // the 10th cut mid-payload

  auto o = OpenOrDie(opt);
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.torn_records_discarded, 1u);
  EXPECT_EQ(st.torn_bytes_discarded, kRecord - 500);
  EXPECT_EQ(st.recovered_batches, 9u);
  std::vector<OutboxItem> items = Drain(*o, kPayload);
  ASSERT_EQ(items.size(), 9u);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(items[i].key.seq, i + 1);
}

TEST_F(SpoolTest, TornHeaderAtTheTailIsDiscardedToo) {
  const OutboxOptions opt = Options(0);
  {
    auto o = OpenOrDie(opt);
    for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(o->Push({"A", q}, BatchBytes("A", q, kPayload)).ok());
  }
  auto files = SegmentFiles(dir_);
  std::filesystem::resize_file(files[0], 2 * kRecord + 7);  // inside the 3rd header
  auto o = OpenOrDie(opt);
  EXPECT_EQ(o->stats().torn_records_discarded, 1u);
  EXPECT_EQ(o->stats().torn_bytes_discarded, 7u);
  EXPECT_EQ(Drain(*o, kPayload).size(), 2u);
}

TEST_F(SpoolTest, FlippedBytesCostOnlyTheirRecords) {
  const OutboxOptions opt = Options(0);
  {
    auto o = OpenOrDie(opt);
    for (uint64_t q = 1; q <= 10; ++q) ASSERT_TRUE(o->Push({"A", q}, BatchBytes("A", q, kPayload)).ok());
  }
  auto files = SegmentFiles(dir_);
  FlipByte(files[0], 2 * kRecord + 5);          // A/3's length field
  FlipByte(files[0], 6 * kRecord + kRecord / 2);  // inside A/7's payload
  auto o = OpenOrDie(opt);
  OutboxStats st = o->stats();
  EXPECT_EQ(st.torn_records_discarded, 2u);
  EXPECT_EQ(st.torn_bytes_discarded, 2 * kRecord);
  EXPECT_EQ(st.recovered_batches, 8u);
  EXPECT_THAT(Keys(Drain(*o, kPayload)),
              ElementsAre("A/1", "A/2", "A/4", "A/5", "A/6", "A/8", "A/9", "A/10"));
}

TEST_F(SpoolTest, RecordDamagedAfterItWasSpooledIsNeverSent) {
  auto o = OpenOrDie(Options(0));
  for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(o->Push({"A", q}, BatchBytes("A", q, kPayload)).ok());
  FlipByte(SegmentFiles(dir_)[0], kRecord + 100);  // A/2, while the outbox is open
  // A/3 could never be stored after A/2's loss (the collector stores seqs in order): it
  // goes too, as a drop.
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/1"));
  const OutboxStats st = o->stats();
  EXPECT_EQ(st.torn_records_discarded, 1u);
  EXPECT_EQ(st.torn_bytes_discarded, kRecord);
  EXPECT_EQ(st.dropped_batches, 1u);
  EXPECT_EQ(st.spool_batches, 1u);
}

TEST_F(SpoolTest, CloseSpillsMemoryAndACorruptStateFileOnlyCostsResends) {
  {
    auto o = OpenOrDie(Options(1 << 20));
    for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(o->Push({"A", q}, BatchBytes("A", q, kPayload)).ok());
    ASSERT_EQ(o->stats().spool_batches, 0u);
    ASSERT_TRUE(o->Ack("A", 1).ok());
    ASSERT_TRUE(o->Close().ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(o->Push({"A", 4}, "x")));
  }
  {
    auto o = OpenOrDie(Options(1 << 20));
    EXPECT_EQ(o->stats().recovered_batches, 2u);
    ASSERT_TRUE(o->Ack("A", 2).ok());
  }
  std::ofstream(dir_ + "/spool.state", std::ios::binary | std::ios::trunc) << "garbage";
  auto o = OpenOrDie(Options(1 << 20));
  EXPECT_TRUE(o->stats().state_file_discarded);
  // A/2's ack was lost with the state file: it is resent (the collector drops it).
  EXPECT_THAT(Keys(Drain(*o, kPayload)), ElementsAre("A/2", "A/3"));
}

}  // namespace
}  // namespace opmap::agent::testing
