// The store's ingest side. On both engines (store_engines.h): exactly-once commits,
// session state, out-of-order seqs, persistence across reopen. SQLite only: opening
// files, atomicity under an injected failure, busy files, process kill, retention by
// receive time. ClickHouse only: a last batch whose commit failed half-way is finished by
// its resend, retention by capture day, schema versions.
#include "collector/store/sqlite/sqlite_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "tests/unit/store/store_engines.h"
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
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("postgres://localhost:5432/db");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("unknown store scheme"), std::string::npos) << s.status();
  EXPECT_EQ(OpenStore("sqlite:").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("/tmp/x.db").status().code(), absl::StatusCode::kInvalidArgument);
  // A ClickHouse URL is checked before anything is contacted.
  EXPECT_EQ(OpenStore("clickhouse://127.0.0.1:1/db?colour=red").status().code(),
            absl::StatusCode::kInvalidArgument);
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

// A store whose pages were damaged (here: one overwritten with 0xFF) is refused at open
// with DataLoss naming the file and the check, never opened to answer from changed data.
TEST(OpenStore, DamagedPagesAreRefusedAtOpen) {
  TempDir dir;
  const std::string path = dir.File("store.db");
  OpenOrDie(path).reset();
  {
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("CREATE TABLE filler(a INTEGER, b TEXT)"), "");
    ASSERT_EQ(raw.Exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                       "WHERE i < 4000) INSERT INTO filler SELECT i, printf('%0100d', i) FROM n"),
              "");
    ASSERT_EQ(raw.Exec("PRAGMA wal_checkpoint(TRUNCATE)"), "");
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 40u * 4096);
  std::fill(bytes.begin() + 30 * 4096, bytes.begin() + 31 * 4096, '\xff');
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore("sqlite:" + path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_NE(s.status().message().find("quick_check"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find(path), std::string::npos) << s.status();
}

class StoreTest : public testing::EngineTest {};

TEST_P(StoreTest, SecondCommitOfASeqIsDuplicateAndWritesNothing) {
  Store* store = store_.get();
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
  // Nothing of the duplicate's rollup is visible.
  opmap::v1::LatencyRequest q;
  EXPECT_EQ(store->QueryLatency(q).value().rows_size(), 0);
  EXPECT_EQ(store->QueryTimeBreakdown({}).value().devices_size(), 0);
  if (!clickhouse()) {
    RawDb raw(SqlitePath());
    EXPECT_EQ(raw.Text("SELECT host FROM sessions"), "host-a");
    EXPECT_EQ(raw.Int("SELECT count(*) FROM rollups"), 0);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM device_times"), 0);
  }
}

TEST_P(StoreTest, UnknownSessionIsEmptyState) {
  SessionState state = store_->GetSession("nobody", "none").value();
  EXPECT_EQ(state.last_seq, 0u);
  EXPECT_EQ(state.string_count, 0u);
  EXPECT_FALSE(state.complete);
  EXPECT_TRUE(store_->LoadSessionPayloads("nobody", "none").value().empty());
}

TEST_P(StoreTest, RejectsMalformedCommits) {
  Store* store = store_.get();
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

TEST_P(StoreTest, OutOfOrderSeqsKeepHighestSeqAndPayloadOrder) {
  Store* store = store_.get();
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

TEST_P(StoreTest, StatePersistsAcrossReopen) {
  analysis::SessionRollup rollup = SmallRollup();
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    BatchSpec spec;
    spec.seq = seq;
    spec.last = seq == 3;
    opmap::v1::Batch b = MakeBatch(spec);
    ASSERT_EQ(store_->CommitBatch(Commit(b, "p" + std::to_string(seq), 1,
                                         seq == 3 ? &rollup : nullptr))
                  .value(),
              CommitOutcome::kStored);
  }
  // Another collector (a restart, or another replica) sees the same state.
  std::unique_ptr<Store> store = Reopen();
  ASSERT_NE(store, nullptr);
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

// The agent resends the last batch (its ack was lost): stored and rolled up once.
TEST_P(StoreTest, LastBatchResentIsDuplicateAndRolledUpOnce) {
  analysis::SessionRollup rollup = SmallRollup();
  BatchSpec spec;
  spec.last = true;
  spec.window_start_ns = 500;
  spec.window_end_ns = 1500;
  opmap::v1::Batch b = MakeBatch(spec);
  ASSERT_EQ(store_->CommitBatch(Commit(b, "p1", 1, &rollup)).value(), CommitOutcome::kStored);
  std::unique_ptr<Store> other = Reopen();  // another collector replica
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->CommitBatch(Commit(b, "p1", 2, &rollup)).value(), CommitOutcome::kDuplicate);
  spec.seq = 2;
  opmap::v1::Batch after = MakeBatch(spec);
  EXPECT_EQ(other->CommitBatch(Commit(after, "p2", 2, &rollup)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  opmap::v1::LatencyRequest q;
  q.add_group_by(opmap::v1::GROUP_BY_SESSION);
  opmap::v1::LatencyResponse r = other->QueryLatency(q).value();
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).count(), 3u);
  // The window: the batch's, widened by the rollup's event hull [1000, 2000).
  EXPECT_EQ(r.rows(0).window_start_ns(), 500);
  EXPECT_EQ(r.rows(0).window_end_ns(), 2000);
  opmap::v1::TimeBreakdownResponse t = other->QueryTimeBreakdown({}).value();
  ASSERT_EQ(t.devices_size(), 1);
  EXPECT_EQ(t.devices(0).span_ns(), 1000);
  EXPECT_EQ(other->Stats().batches, 1);
  EXPECT_EQ(other->Stats().sessions_complete, 1);
}

// ClickHouse only. A collector stored the last batch, then failed before the rollup: the
// session is not complete, its last batch is not counted, and the resend (to any
// collector) finishes the commit without storing the batch twice.
TEST_P(StoreTest, HalfCommittedLastBatchIsFinishedByItsResend) {
  if (!clickhouse()) GTEST_SKIP() << "ClickHouse commits in steps; SQLite in one transaction";
  auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
  ASSERT_NE(ch, nullptr);
  opmap::v1::Batch b1 = MakeBatch({});
  ASSERT_EQ(store_->CommitBatch(Commit(b1, "p1")).value(), CommitOutcome::kStored);
  // What CommitBatch writes first for a last batch, alone.
  ASSERT_TRUE(ch->Execute("INSERT INTO " + ch->database() +
                          ".batches (agent, session, seq, last, day, payload, records, "
                          "string_count_after) VALUES ('agent-1', 's1', 2, 1, 19700101, 'p2', "
                          "100, 20)")
                  .ok());
  SessionState state = store_->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 1u);
  EXPECT_EQ(state.string_count, 10u);
  EXPECT_FALSE(state.complete);
  EXPECT_EQ(store_->LoadSessionPayloads("agent-1", "s1").value(), std::vector<std::string>{"p1"});

  BatchSpec spec;
  spec.seq = 2;
  spec.last = true;
  opmap::v1::Batch b2 = MakeBatch(spec);
  analysis::SessionRollup rollup = SmallRollup();
  std::unique_ptr<Store> other = Reopen();
  ASSERT_EQ(other->CommitBatch(Commit(b2, "p2", 1, &rollup)).value(), CommitOutcome::kStored);
  state = store_->GetSession("agent-1", "s1").value();
  EXPECT_EQ(state.last_seq, 2u);
  EXPECT_EQ(state.string_count, 20u);
  EXPECT_TRUE(state.complete);
  EXPECT_EQ(store_->LoadSessionPayloads("agent-1", "s1").value(),
            (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(store_->Stats().batches, 2);
  EXPECT_EQ(store_->QueryLatency({}).value().rows(0).count(), 3u);
}

// ClickHouse with a cluster: the same block inserted twice (a resend through another
// collector replica that did not see the first) is stored once, through the Distributed
// table, by ReplicatedMergeTree's block deduplication.
TEST_P(StoreTest, IdenticalInsertIsDroppedByBlockDeduplication) {
  if (!clickhouse()) GTEST_SKIP() << "ClickHouse block deduplication";
  auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
  ASSERT_NE(ch, nullptr);
  if (ch->cluster().empty()) GTEST_SKIP() << "deduplication needs a cluster (ReplicatedMergeTree)";
  const std::string insert = "INSERT INTO " + ch->database() +
                             ".batches (agent, session, seq, day, payload) VALUES "
                             "('agent-9', 's1', 1, 19700101, 'x')";
  ASSERT_TRUE(ch->Execute(insert).ok());
  std::unique_ptr<Store> other = Reopen();
  auto* ch2 = dynamic_cast<ClickHouseStore*>(other.get());
  ASSERT_TRUE(ch2->Execute(insert).ok());
  EXPECT_EQ(store_->Stats().batches, 1);
  EXPECT_EQ(store_->LoadSessionPayloads("agent-9", "s1").value().size(), 1u);
}

TEST_P(StoreTest, ClickHouseRetentionDropsWholeCaptureDaysOfCompleteSessions) {
  if (!clickhouse()) GTEST_SKIP() << "SQLite expires by receive time: ExpireRawBefore.*";
  constexpr int64_t kDay = int64_t{86400} * 1'000'000'000;
  const int64_t day0 = int64_t{20454} * kDay;  // 2026-01-01
  analysis::SessionRollup rollup;
  auto commit = [&](const std::string& session, uint64_t seq, int64_t day, bool last) {
    BatchSpec spec;
    spec.session = session;
    spec.seq = seq;
    spec.last = last;
    spec.window_start_ns = day + 1000;
    spec.window_end_ns = day + 2000;
    opmap::v1::Batch b = MakeBatch(spec);
    ASSERT_EQ(store_->CommitBatch(Commit(b, "p", 1, last ? &rollup : nullptr)).value(),
              CommitOutcome::kStored);
  };
  rollup = SmallRollup();
  commit("old-complete", 1, day0, false);
  commit("old-complete", 2, day0, true);
  commit("old-open", 1, day0 + kDay, false);
  commit("new-complete", 1, day0 + 4 * kDay, true);
  EXPECT_EQ(store_->ExpireRawBefore(day0 + 3 * kDay).value(), 2);
  EXPECT_TRUE(store_->LoadSessionPayloads("agent-1", "old-complete").value().empty());
  EXPECT_EQ(store_->LoadSessionPayloads("agent-1", "old-open").value().size(), 1u);
  EXPECT_EQ(store_->LoadSessionPayloads("agent-1", "new-complete").value().size(), 1u);
  EXPECT_EQ(store_->Stats().batches, 2);
  EXPECT_EQ(store_->ExpireRawBefore(day0 + 3 * kDay).value(), 0);
  // Rollups stay, and an expired batch's resend is still a duplicate.
  EXPECT_EQ(store_->QueryLatency({}).value().rows(0).count(), 6u);
  BatchSpec spec;
  spec.session = "old-complete";
  opmap::v1::Batch resend = MakeBatch(spec);
  EXPECT_EQ(store_->CommitBatch(Commit(resend, "p")).value(), CommitOutcome::kDuplicate);
}

TEST_P(StoreTest, ClickHouseSchemaIsVersionedAndNewerVersionsRefused) {
  if (!clickhouse()) GTEST_SKIP() << "SQLite: OpenStore.SchemaIsVersionedAndNewerVersionsRefused";
  auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
  ASSERT_NE(ch, nullptr);
  EXPECT_NE(Reopen(), nullptr);  // idempotent
  ASSERT_TRUE(ch->Execute("INSERT INTO " + ch->database() +
                          ".opmap_meta (key, value) VALUES ('schema_version', 99)")
                  .ok());
  absl::StatusOr<std::unique_ptr<Store>> s = OpenStore(url_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("schema version 99"), std::string::npos) << s.status();
}

// Takes a ClickHouse store's opmap_meta back to `version`: made again empty (dropping a
// replicated table forgets its dedup hashes, so the migration's own meta rows are not
// taken for repeats of the first open's), then the version row.
void SetSchemaVersion(ClickHouseStore& ch, int version) {
  const std::string db = ch.database();
  const std::string on = ch.cluster().empty() ? "" : " ON CLUSTER " + ch.cluster();
  auto exec = [&](const std::string& sql) {
    absl::StatusOr<std::string> r = ch.Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status();
    return r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : "";
  };
  std::vector<std::string> metas = {"opmap_meta"};
  if (!ch.cluster().empty()) metas.insert(metas.begin(), "opmap_meta_local");
  std::vector<std::string> creates;
  for (const std::string& t : metas) {
    std::string create = absl::StrReplaceAll(
        exec(absl::StrCat("SHOW CREATE TABLE ", db, ".", t, " FORMAT TSVRaw")),
        {{absl::StrCat(db, ".", t, " "), absl::StrCat(db, ".", t, on, " ")}});
    creates.push_back(create);
  }
  for (auto it = metas.rbegin(); it != metas.rend(); ++it) {
    exec(absl::StrCat("DROP TABLE ", db, ".", *it, on));
  }
  for (const std::string& create : creates) exec(create);
  exec(absl::StrCat("INSERT INTO ", db, ".opmap_meta (key, value) VALUES ('schema_version', ",
                    version, ")"));
}

// The schema version a ClickHouse store's opmap_meta holds, as text.
std::string SchemaVersionOf(ClickHouseStore& ch) {
  absl::StatusOr<std::string> r = ch.Execute(absl::StrCat(
      "SELECT max(value) FROM ", ch.database(),
      ".opmap_meta WHERE key = 'schema_version' FORMAT TSV"));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : "";
}

// A version-1 database (no events, no rollup_buckets, sessions without the bucket
// columns) opened by this collector: migrated in place, its sessions still answered.
TEST_P(StoreTest, ClickHouseVersion1DatabaseIsMigrated) {
  if (!clickhouse()) GTEST_SKIP() << "SQLite: its own migrations are tested in OpenStore.*";
  auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
  ASSERT_NE(ch, nullptr);
  analysis::SessionRollup rollup = SmallRollup();
  BatchSpec spec;
  spec.session = "old";
  spec.last = true;
  opmap::v1::Batch old = MakeBatch(spec);
  ASSERT_EQ(store_->CommitBatch(Commit(old, "p", 1, &rollup)).value(), CommitOutcome::kStored);
  const std::string db = ch->database();
  const std::string on = ch->cluster().empty() ? "" : " ON CLUSTER " + ch->cluster();
  auto exec = [&](const std::string& sql) {
    absl::StatusOr<std::string> r = ch->Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status();
    return r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : "";
  };
  const std::vector<std::string> suffixes =
      ch->cluster().empty() ? std::vector<std::string>{""} : std::vector<std::string>{"", "_local"};
  // Back to version 1.
  // (A Distributed table over replicated shards can't be altered ON CLUSTER: made again.)
  if (!ch->cluster().empty()) exec(absl::StrCat("DROP TABLE ", db, ".sessions", on));
  exec(absl::StrCat("ALTER TABLE ", db, ch->cluster().empty() ? ".sessions" : ".sessions_local",
                    on, " DROP COLUMN bucketed, DROP COLUMN bucket_ns"));
  if (!ch->cluster().empty()) {
    exec(absl::StrCat("CREATE TABLE ", db, ".sessions", on, " AS ", db,
                      ".sessions_local ENGINE = Distributed(", ch->cluster(), ", ", db,
                      ", sessions_local, cityHash64(agent))"));
  }
  for (const std::string& suffix : suffixes) {
    exec(absl::StrCat("DROP TABLE ", db, ".events", suffix, on));
    exec(absl::StrCat("DROP TABLE ", db, ".rollup_buckets", suffix, on));
  }
  SetSchemaVersion(*ch, 1);
  ASSERT_EQ(exec(absl::StrCat("SELECT count() FROM system.columns WHERE database = '", db,
                              "' AND table = 'sessions' AND name = 'bucket_ns' FORMAT TSV")),
            "0");

  std::unique_ptr<Store> migrated = Reopen();
  ASSERT_NE(migrated, nullptr);
  EXPECT_EQ(SchemaVersionOf(*ch), std::to_string(ClickHouseStore::kSchemaVersion));
  EXPECT_EQ(exec(absl::StrCat("SELECT count() FROM system.columns WHERE database = '", db,
                              "' AND table LIKE 'sessions%' AND name IN ('bucketed', "
                              "'bucket_ns') FORMAT TSV")),
            std::to_string(2 * suffixes.size()));
  // The v1 session is read per session (unbucketed); a new one lands beside it.
  EXPECT_EQ(migrated->QueryLatency({}).value().rows(0).count(), 3u);
  spec.session = "new";
  opmap::v1::Batch fresh = MakeBatch(spec);
  ASSERT_EQ(migrated->CommitBatch(Commit(fresh, "p", 1, &rollup)).value(), CommitOutcome::kStored);
  EXPECT_EQ(migrated->QueryLatency({}).value().rows(0).count(), 6u);
  EXPECT_EQ(exec(absl::StrCat("SELECT bucketed FROM ", db, ".sessions WHERE session = 'old' FORMAT TSV")),
            "0");
}

// A version-2 database (no flush columns, no flush_buckets) opened by this collector:
// migrated in place, a new session stored and answered. (The sessions table keeps its v3
// shape here: `flush` is in its sorting key, which 18.16 cannot drop.)
TEST_P(StoreTest, ClickHouseVersion2DatabaseIsMigrated) {
  if (!clickhouse()) GTEST_SKIP() << "SQLite: its own migrations are tested in OpenStore.*";
  auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
  ASSERT_NE(ch, nullptr);
  const std::string db = ch->database();
  const bool cluster = !ch->cluster().empty();
  const std::string on = cluster ? " ON CLUSTER " + ch->cluster() : "";
  auto exec = [&](const std::string& sql) {
    absl::StatusOr<std::string> r = ch->Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status();
    return r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : "";
  };
  // Back to version 2: the Distributed tables are dropped (the migration makes them again
  // from the local tables), the flush columns and flush_buckets removed.
  for (const char* table : {"rollups", "device_times", "session_counters", "session_drops",
                            "session_power", "session_unavailable", "events"}) {
    const std::string local = cluster ? absl::StrCat(table, "_local") : table;
    if (cluster) exec(absl::StrCat("DROP TABLE ", db, ".", table, on));
    exec(absl::StrCat("ALTER TABLE ", db, ".", local, on, " DROP COLUMN flush"));
  }
  for (const char* suffix : {"", "_local"}) {
    if (*suffix == '\0' || cluster) exec(absl::StrCat("DROP TABLE ", db, ".flush_buckets", suffix, on));
  }
  SetSchemaVersion(*ch, 2);
  ASSERT_EQ(exec(absl::StrCat("SELECT count() FROM system.columns WHERE database = '", db,
                              "' AND name = 'flush' FORMAT TSV")),
            cluster ? "2" : "1");

  std::unique_ptr<Store> migrated = Reopen();
  ASSERT_NE(migrated, nullptr);
  EXPECT_EQ(SchemaVersionOf(*ch), std::to_string(ClickHouseStore::kSchemaVersion));
  EXPECT_EQ(exec(absl::StrCat("SELECT count() FROM system.columns WHERE database = '", db,
                              "' AND name = 'flush' FORMAT TSV")),
            std::to_string((cluster ? 2 : 1) * 9));
  analysis::SessionRollup rollup = SmallRollup();
  BatchSpec spec;
  spec.session = "new";
  spec.last = true;
  opmap::v1::Batch fresh = MakeBatch(spec);
  ASSERT_EQ(migrated->CommitBatch(Commit(fresh, "p", 1, &rollup)).value(), CommitOutcome::kStored);
  EXPECT_EQ(migrated->QueryLatency({}).value().rows(0).count(), 3u);
  EXPECT_NE(exec(absl::StrCat("SELECT flush FROM ", db, ".sessions WHERE session = 'new' FORMAT TSV")),
            "0");
}

OPMAP_INSTANTIATE_ENGINES(StoreTest);

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
