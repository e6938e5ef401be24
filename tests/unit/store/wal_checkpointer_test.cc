// The store's background WAL checkpoints (wal_checkpointer.h): commits do not checkpoint
// below the hard limit, a pass copies the WAL so the next commit starts it over, and
// everything committed is there, whoever copied it and when.
#include "collector/store/sqlite/wal_checkpointer.h"

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "collector/store/sqlite/sqlite_store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using testing::BatchSpec;
using testing::MakeBatch;
using testing::TempDir;

// Frames in the WAL now (a PASSIVE checkpoint's report; it copies what it can too).
int64_t WalFrames(const std::string& path) {
  sqlite3* db = nullptr;
  int frames = -1, copied = -1;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
    sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied);
  }
  sqlite3_close(db);
  return frames;
}

void CommitBatches(SqliteStore& store, const std::string& session, int n, size_t bytes) {
  for (int i = 1; i <= n; ++i) {
    BatchSpec spec;
    spec.session = session;
    spec.seq = static_cast<uint64_t>(i);
    opmap::v1::Batch b = MakeBatch(spec);
    BatchCommit c{&b, std::string(bytes, static_cast<char>('a' + i % 26)), i, 1, 1, nullptr};
    ASSERT_EQ(store.CommitBatch(c).value(), CommitOutcome::kStored);
  }
}

TEST(WalCheckpointer, CommitsLeaveTheWalToThePass) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  // A threshold far above what the test writes: only Flush checkpoints.
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(path, SqliteStoreOptions{.checkpoint_bytes = int64_t{1} << 30});
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NE((*store)->checkpointer(), nullptr);
  CommitBatches(**store, "s1", 120, 64 << 10);  // ~7.7 MB
  // SQLite's automatic checkpoint (1000 pages, ~4 MB) would have restarted the WAL
  // before it grew this far.
  EXPECT_GT(std::filesystem::file_size(path + "-wal"), 6u << 20) << "a commit checkpointed";
  EXPECT_EQ((*store)->checkpointer()->passes(), 0);

  ASSERT_TRUE((*store)->checkpointer()->Flush().ok());
  EXPECT_EQ((*store)->checkpointer()->passes(), 1);
  EXPECT_EQ((*store)->checkpointer()->failures(), 0);
  // Everything was copied: the next commit writes at the start of the WAL again.
  CommitBatches(**store, "s2", 1, 1000);
  EXPECT_LT(WalFrames(path), 10);
  EXPECT_EQ((*store)->LoadSessionPayloads("agent-1", "s1").value().size(), 120u);
}

TEST(WalCheckpointer, PastTheHardLimitTheWriterCheckpoints) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  // Threshold 1 page; hard limit 16 pages. Whether the thread or the writer copies a
  // given frame depends on timing; that everything stays readable does not.
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(path, SqliteStoreOptions{.checkpoint_bytes = 4096});
  ASSERT_TRUE(store.ok()) << store.status();
  CommitBatches(**store, "s1", 200, 40 << 10);
  std::vector<std::string> payloads = (*store)->LoadSessionPayloads("agent-1", "s1").value();
  ASSERT_EQ(payloads.size(), 200u);
  for (size_t i = 0; i < payloads.size(); ++i) {
    ASSERT_EQ(payloads[i], std::string(40 << 10, static_cast<char>('a' + (i + 1) % 26))) << i;
  }
  ASSERT_TRUE((*store)->checkpointer()->Flush().ok());
  store->reset();
  // Reopened from the file alone (the close removed the WAL).
  absl::StatusOr<std::unique_ptr<SqliteStore>> again = SqliteStore::Open(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->GetSession("agent-1", "s1").value().last_seq, 200u);
}

TEST(WalCheckpointer, InMemoryStoreHasNone) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->checkpointer(), nullptr);
  CommitBatches(**store, "s1", 3, 100);
  opmap::v1::LatencyRequest q;
  EXPECT_TRUE((*store)->QueryLatency(q).ok());
}

}  // namespace
}  // namespace opmap::collector
