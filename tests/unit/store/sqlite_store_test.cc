// SqliteStore ingest side on real files: opening, exactly-once commits, atomicity,
// persistence across reopen and process kill, retention.
#include "collector/store/sqlite_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using analysis::RollupSubject;
using testing::BatchSpec;
using testing::MakeBatch;
using testing::RawDb;
using testing::Row;
using testing::TempDir;

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore("sqlite:" + path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(store).value() : nullptr;
}

BatchCommit Commit(const opmap::v1::Batch& b, std::string payload, int64_t received_ns = 1,
                   const analysis::SessionRollup* rollup = nullptr) {
  BatchCommit c;
  c.batch = &b;
  c.payload = std::move(payload);
  c.received_ns = received_ns;
  c.string_count_after = static_cast<uint32_t>(b.seq() * 10);
  c.record_count = 100;
  c.rollup = rollup;
  return c;
}

analysis::SessionRollup SmallRollup() {
  analysis::SessionRollup r;
  r.rows.push_back(Row(RollupSubject::kKernel, "matmul", "aten::mm", "gemm", {100, 200, 300}));
  r.rows.push_back(Row(RollupSubject::kOperatorGpu, "matmul", "aten::mm", "", {600}));
  analysis::DeviceBreakdown d;
  d.device = 0;
  d.event_count = 3;
  d.span_ns = 1000;
  d.busy_ns = 600;
  d.idle_ns = 400;
  d.compute_ns = 600;
  r.devices.push_back(d);
  r.gpu_event_count = 3;
  r.gpu_time_ns = 600;
  r.first_start_ns = 1000;
  r.last_end_ns = 2000;
  return r;
}

TEST(OpenStore, UnknownSchemeIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("clickhouse://localhost:8123");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("unknown store scheme"), std::string::npos) << s.status();
  EXPECT_EQ(OpenStore("sqlite:").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("/tmp/x.db").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpenStore, DirectoryIsAClearError) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("sqlite:" + dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(dir.path()), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("unable to open"), std::string::npos) << s.status();
}

TEST(OpenStore, NonSqliteFileIsDataLoss) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << std::string(4096, 'x') << "this is not an SQLite database\n";
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("sqlite:" + path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_NE(s.status().message().find("not a database"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find(path), std::string::npos) << s.status();
}

TEST(OpenStore, SchemaIsVersionedAndNewerVersionsRefused) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  OpenOrDie(path).reset();
  OpenOrDie(path).reset();  // idempotent
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), SqliteStore::kSchemaVersion);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  ASSERT_EQ(raw.Exec("PRAGMA user_version=99"), "");
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("sqlite:" + path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("schema version 99"), std::string::npos) << s.status();
}

TEST(CommitBatch, SecondCommitOfASeqIsDuplicateAndWritesNothing) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  auto store = OpenOrDie(path);
  opmap::v1::Batch b = MakeBatch({});
  ASSERT_EQ(store->CommitBatch(Commit(b, "payload-A")).value(), CommitOutcome::kStored);

  BatchSpec changed;
  changed.host = "other-host";
  opmap::v1::Batch again = MakeBatch(changed);
  analysis::SessionRollup rollup = SmallRollup();
  EXPECT_EQ(store->CommitBatch(Commit(again, "payload-B", 1, &rollup)).value(),
            CommitOutcome::kDuplicate);

  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "s1").value(),
            std::vector<std::string>{"payload-A"});
  SessionState state = store->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 1u);
  EXPECT_EQ(state.string_count, 10u);
  EXPECT_FALSE(state.complete);
  StoreStats stats = store->Stats();
  EXPECT_EQ(stats.batches, 1);
  EXPECT_EQ(stats.records, 100);
  EXPECT_EQ(stats.sessions_complete, 0);
  RawDb raw(path);
  EXPECT_EQ(raw.Text("SELECT host FROM sessions"), "host-a");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM rollups"), 0);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM device_times"), 0);
}

TEST(CommitBatch, UnknownSessionIsEmptyState) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("store.db"));
  SessionState state = store->GetSession("nobody", "none").value();
  EXPECT_EQ(state.last_seq, 0u);
  EXPECT_EQ(state.string_count, 0u);
  EXPECT_FALSE(state.complete);
  EXPECT_TRUE(store->LoadSessionPayloads("nobody", "none").value().empty());
}

TEST(CommitBatch, RejectsMalformedCommits) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("store.db"));
  EXPECT_EQ(store->CommitBatch(BatchCommit{}).status().code(), absl::StatusCode::kInvalidArgument);
  BatchSpec spec;
  spec.agent = "";
  opmap::v1::Batch no_agent = MakeBatch(spec);
  EXPECT_EQ(store->CommitBatch(Commit(no_agent, "x")).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec = {};
  spec.seq = 0;
  opmap::v1::Batch seq0 = MakeBatch(spec);
  absl::Status st = store->CommitBatch(Commit(seq0, "x")).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("seq"), std::string::npos);
}

TEST(CommitBatch, OutOfOrderSeqsKeepHighestSeqAndPayloadOrder) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("store.db"));
  BatchSpec spec;
  spec.seq = 2;
  spec.window_start_ns = 2000;
  opmap::v1::Batch b2 = MakeBatch(spec);
  spec.seq = 1;
  spec.window_start_ns = 1000;
  opmap::v1::Batch b1 = MakeBatch(spec);
  ASSERT_EQ(store->CommitBatch(Commit(b2, "two")).value(), CommitOutcome::kStored);
  ASSERT_EQ(store->CommitBatch(Commit(b1, "one")).value(), CommitOutcome::kStored);
  SessionState state = store->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 2u);
  EXPECT_EQ(state.string_count, 20u);  // from seq 2, the highest
  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "s1").value(),
            (std::vector<std::string>{"one", "two"}));
}

TEST(CommitBatch, StatePersistsAcrossReopen) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  analysis::SessionRollup rollup = SmallRollup();
  {
    auto store = OpenOrDie(path);
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      BatchSpec spec;
      spec.seq = seq;
      spec.last = seq == 3;
      opmap::v1::Batch b = MakeBatch(spec);
      ASSERT_EQ(store->CommitBatch(Commit(b, "p" + std::to_string(seq), 1,
                                          seq == 3 ? &rollup : nullptr))
                    .value(),
                CommitOutcome::kStored);
    }
  }
  auto store = OpenOrDie(path);
  SessionState state = store->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 3u);
  EXPECT_EQ(state.string_count, 30u);
  EXPECT_TRUE(state.complete);
  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "s1").value(),
            (std::vector<std::string>{"p1", "p2", "p3"}));
  opmap::v1::Batch again = MakeBatch({});
  EXPECT_EQ(store->CommitBatch(Commit(again, "p1")).value(), CommitOutcome::kDuplicate);
  opmap::v1::LatencyRequest q;
  q.set_subject(opmap::v1::LATENCY_SUBJECT_KERNEL);
  opmap::v1::LatencyResponse r = store->QueryLatency(q).value();
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).count(), 3u);
  EXPECT_EQ(r.rows(0).sum_ns(), 600);
  EXPECT_EQ(store->Stats().sessions_complete, 1);
}

// A failure while storing the rollup (forced with a trigger on the last table written)
// must leave nothing of the commit: no batch, no rollup rows, the session unchanged.
TEST(CommitBatch, FailedRollupCommitStoresNothing) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  auto store = OpenOrDie(path);
  opmap::v1::Batch b1 = MakeBatch({});
  ASSERT_EQ(store->CommitBatch(Commit(b1, "p1")).value(), CommitOutcome::kStored);
  RawDb raw(path);
  ASSERT_EQ(raw.Exec("CREATE TRIGGER fail BEFORE INSERT ON device_times "
                     "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"),
            "");
  BatchSpec spec;
  spec.seq = 2;
  spec.last = true;
  spec.window_end_ns = 5000;
  opmap::v1::Batch b2 = MakeBatch(spec);
  analysis::SessionRollup rollup = SmallRollup();
  absl::StatusOr<CommitOutcome> failed = store->CommitBatch(Commit(b2, "p2", 1, &rollup));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("injected failure"), std::string::npos)
      << failed.status();
  EXPECT_EQ(raw.Int("SELECT count(*) FROM batches"), 1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM rollups"), 0);
  EXPECT_EQ(raw.Int("SELECT window_end_ns FROM sessions"), 0);
  SessionState state = store->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 1u);
  EXPECT_FALSE(state.complete);

  // The resend after the cause is gone goes through: the failed attempt left no trace.
  ASSERT_EQ(raw.Exec("DROP TRIGGER fail"), "");
  EXPECT_EQ(store->CommitBatch(Commit(b2, "p2", 1, &rollup)).value(), CommitOutcome::kStored);
  EXPECT_TRUE(store->GetSession("agent-1", "s1").value().complete);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM rollups"), 2);
}

TEST(CommitBatch, BusyDatabaseIsUnavailableAndRetryable) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(path, SqliteStoreOptions{.busy_timeout_ms = 50});
  ASSERT_TRUE(store.ok()) << store.status();
  RawDb other(path);
  ASSERT_EQ(other.Exec("BEGIN IMMEDIATE"), "");  // another process holds the write lock
  opmap::v1::Batch b = MakeBatch({});
  absl::StatusOr<CommitOutcome> busy = (*store)->CommitBatch(Commit(b, "p"));
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kUnavailable) << busy.status();
  ASSERT_EQ(other.Exec("COMMIT"), "");
  EXPECT_EQ((*store)->CommitBatch(Commit(b, "p")).value(), CommitOutcome::kStored);
}

// WAL + synchronous=NORMAL: a commit that returned survives SIGKILL of the process.
TEST(CommitBatch, SurvivesProcessKill) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  OpenOrDie(path).reset();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<Store>> store = OpenStore("sqlite:" + path);
    if (!store.ok()) _exit(2);
    for (uint64_t seq = 1; seq <= 5; ++seq) {
      BatchSpec spec;
      spec.seq = seq;
      opmap::v1::Batch b = MakeBatch(spec);
      if (!(*store)->CommitBatch(Commit(b, "p" + std::to_string(seq))).ok()) _exit(3);
    }
    kill(getpid(), SIGKILL);  // no close, no checkpoint, no destructors
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  auto store = OpenOrDie(path);
  EXPECT_EQ(store->GetSession("agent-1", "s1").value().last_seq, 5u);
  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "s1").value().size(), 5u);
}

TEST(ExpireRawBefore, DeletesOldBatchesOfCompleteSessionsOnly) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("store.db"));
  analysis::SessionRollup rollup = SmallRollup();
  auto commit = [&](const std::string& session, uint64_t seq, int64_t received, bool last) {
    BatchSpec spec;
    spec.session = session;
    spec.seq = seq;
    spec.last = last;
    opmap::v1::Batch b = MakeBatch(spec);
    ASSERT_EQ(store->CommitBatch(Commit(b, "p", received, last ? &rollup : nullptr)).value(),
              CommitOutcome::kStored);
  };
  commit("old-complete", 1, 100, false);
  commit("old-complete", 2, 150, true);
  commit("old-open", 1, 100, false);
  commit("new-complete", 1, 300, true);
  EXPECT_EQ(store->ExpireRawBefore(200).value(), 2);
  EXPECT_TRUE(store->LoadSessionPayloads("agent-1", "old-complete").value().empty());
  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "old-open").value().size(), 1u);
  EXPECT_EQ(store->LoadSessionPayloads("agent-1", "new-complete").value().size(), 1u);
  EXPECT_EQ(store->Stats().batches, 2);
  EXPECT_EQ(store->ExpireRawBefore(200).value(), 0);

  // Rollups stay, and an expired batch's resend is still a duplicate.
  opmap::v1::LatencyRequest q;
  EXPECT_EQ(store->QueryLatency(q).value().rows(0).count(), 6u);
  BatchSpec spec;
  spec.session = "old-complete";
  opmap::v1::Batch resend = MakeBatch(spec);
  EXPECT_EQ(store->CommitBatch(Commit(resend, "p")).value(), CommitOutcome::kDuplicate);
  spec.seq = 3;
  opmap::v1::Batch after_last = MakeBatch(spec);
  EXPECT_EQ(store->CommitBatch(Commit(after_last, "p")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Stats().batches, 2);
}

}  // namespace
}  // namespace opmap::collector
