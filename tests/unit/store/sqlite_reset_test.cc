// SqliteStore::RemoveAllRowsForTesting, which the batch-ingest fuzzer uses to reuse one
// ":memory:" store across inputs: afterwards the store must answer as a fresh one (else
// a fuzz finding would depend on the inputs before it), and a file store must refuse.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "collector/store/sqlite/sqlite_store.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using analysis::RollupSubject;
using testing::BatchSpec;
using testing::MakeBatch;
using testing::Row;
using testing::TempDir;

CommitOutcome CommitOne(SqliteStore& store, uint64_t seq, bool last) {
  BatchSpec spec;
  spec.seq = seq;
  spec.last = last;
  opmap::v1::Batch b = MakeBatch(spec);
  analysis::SessionRollup rollup;
  rollup.rows.push_back(Row(RollupSubject::kKernel, "matmul", "aten::mm", "gemm", {100, 300}));
  rollup.gpu_event_count = 2;
  BatchCommit c;
  c.batch = &b;
  c.payload = "p";
  c.received_ns = 1;
  c.string_count_after = static_cast<uint32_t>(seq * 10);
  c.record_count = 2;
  c.rollup = last ? &rollup : nullptr;
  absl::StatusOr<CommitOutcome> outcome = store.CommitBatch(c);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  return outcome.value_or(CommitOutcome::kDuplicate);
}

TEST(RemoveAllRowsForTesting, LeavesAMemoryStoreAnsweringAsAFreshOne) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(":memory:");
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    EXPECT_EQ(CommitOne(store, 1, false), CommitOutcome::kStored);
    EXPECT_EQ(CommitOne(store, 2, true), CommitOutcome::kStored);
    EXPECT_EQ(CommitOne(store, 2, true), CommitOutcome::kDuplicate);
    EXPECT_EQ(store.GetSession("agent-1", "s1").value().last_seq, 2u);
    EXPECT_EQ(store.Stats().batches, 2);
    EXPECT_EQ(store.QueryLatency({}).value().rows(0).count(), 2u);

    ASSERT_TRUE(store.RemoveAllRowsForTesting().ok());
    EXPECT_EQ(store.GetSession("agent-1", "s1").value().last_seq, 0u);
    EXPECT_EQ(store.Stats().batches, 0);
    EXPECT_EQ(store.QueryLatency({}).value().rows_size(), 0);
    EXPECT_TRUE(store.LoadSessionPayloads("agent-1", "s1").value().empty());
  }
}

TEST(RemoveAllRowsForTesting, AFileStoreRefusesAndKeepsItsData) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(dir.File("s.db"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(CommitOne(**opened, 1, false), CommitOutcome::kStored);
  absl::Status st = (*opened)->RemoveAllRowsForTesting();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("s.db"), std::string::npos) << st;
  EXPECT_EQ((*opened)->GetSession("agent-1", "s1").value().last_seq, 1u);
}

}  // namespace
}  // namespace opmap::collector
