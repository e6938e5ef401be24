// GroupCommitter over a real SQLite store: concurrent commits form groups, each batch gets
// its own outcome, a batch that fails rolls back alone, and what is acknowledged is
// stored (the commit mark counts it).
#include "collector/group_commit.h"

#include <atomic>
#include <thread>
#include <vector>

#include "collector/store/sqlite/sqlite_store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector::group_commit_testing {
namespace {

using ::opmap::collector::testing::BatchSpec;
using ::opmap::collector::testing::MakeBatch;
using ::opmap::collector::testing::TempDir;

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(dir_.File("c.db"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(GroupCommitTest, ConcurrentBatchesAreGroupedAndEachGetsItsOutcome) {
  GroupCommitOptions options;
  options.max_delay = absl::Milliseconds(20);  // the threads' batches meet in few groups
  GroupCommitter committer(store_.get(), options);
  constexpr int kThreads = 8, kSeqs = 5;
  std::vector<std::thread> threads;
  std::atomic<int> stored{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int q = 1; q <= kSeqs; ++q) {
        BatchSpec spec;
        spec.session = "s" + std::to_string(t);
        spec.seq = static_cast<uint64_t>(q);
        opmap::v1::Batch b = MakeBatch(spec);
        BatchCommit c;
        c.batch = &b;
        c.payload = b.SerializeAsString();
        c.string_count_after = 1;
        absl::StatusOr<CommitOutcome> o = committer.Commit(c);
        if (o.ok() && *o == CommitOutcome::kStored) ++stored;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(stored.load(), kThreads * kSeqs);
  EXPECT_EQ(committer.batches(), kThreads * kSeqs);
  EXPECT_LT(committer.groups(), kThreads * kSeqs) << "no two batches shared a group";
  for (int t = 0; t < kThreads; ++t) {
    absl::StatusOr<SessionState> st = store_->GetSession("agent-1", "s" + std::to_string(t));
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->last_seq, static_cast<uint64_t>(kSeqs));
  }
  EXPECT_EQ(store_->Stats().batches, kThreads * kSeqs);
}

TEST_F(GroupCommitTest, AFailingBatchRollsBackAloneAndADuplicateIsOneInTheGroup) {
  std::vector<opmap::v1::Batch> batches;
  for (int i = 0; i < 3; ++i) {
    BatchSpec spec;
    spec.session = "g" + std::to_string(i);
    batches.push_back(MakeBatch(spec));
  }
  batches[1].clear_session_id();  // refused by the store's checks
  std::vector<BatchCommit> commits(4);
  for (int i = 0; i < 3; ++i) {
    commits[i].batch = &batches[i];
    commits[i].payload = batches[i].SerializeAsString();
  }
  commits[3] = commits[2];  // the same batch again, in the same group
  std::vector<const BatchCommit*> group;
  for (const BatchCommit& c : commits) group.push_back(&c);
  std::vector<absl::StatusOr<CommitOutcome>> out = store_->CommitBatches(group);
  ASSERT_EQ(out.size(), 4u);
  ASSERT_TRUE(out[0].ok());
  EXPECT_EQ(*out[0], CommitOutcome::kStored);
  EXPECT_FALSE(out[1].ok());
  ASSERT_TRUE(out[2].ok());
  EXPECT_EQ(*out[2], CommitOutcome::kStored);
  ASSERT_TRUE(out[3].ok());
  EXPECT_EQ(*out[3], CommitOutcome::kDuplicate);
  EXPECT_EQ(store_->Stats().batches, 2);
  // Reopened, the commit mark agrees with what the database holds (two commits).
  store_.reset();
  absl::StatusOr<std::unique_ptr<SqliteStore>> again = SqliteStore::Open(dir_.File("c.db"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Stats().batches, 2);
}

}  // namespace
}  // namespace opmap::collector::group_commit_testing
