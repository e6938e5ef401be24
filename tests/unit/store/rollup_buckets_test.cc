// Pre-merged rollup buckets (rollup_buckets.h): the bucket rule, the covered buckets of
// a range, and the exact split — a store with buckets answers every query exactly as a
// store without them (per-session rows only, the v1 way), for ranges that cut through
// buckets, start or end on their boundaries, or cover them whole. Also the v1 → v2
// migration.
#include "collector/store/rollup_buckets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/sqlite/sqlite_store.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_engines.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using analysis::RollupSubject;
using google::protobuf::util::MessageDifferencer;
using testing::BatchSpec;
using testing::MakeBatch;
using testing::RawDb;
using testing::Row;
using testing::TempDir;

constexpr int64_t kWidth = 1000;

TEST(BucketOf, WholeNonEmptyWindowInsideOneBucketOnly) {
  EXPECT_EQ(BucketOf(1200, 1800, kWidth), 1000);
  EXPECT_EQ(BucketOf(1000, 2000, kWidth), 1000);  // both boundaries: [1000, 2000) fits
  EXPECT_EQ(BucketOf(1999, 2000, kWidth), 1000);
  EXPECT_EQ(BucketOf(2000, 2001, kWidth), 2000);
  EXPECT_EQ(BucketOf(1, 1000, kWidth), 0);
  EXPECT_EQ(BucketOf(1500, 2001, kWidth), std::nullopt);  // crosses 2000
  EXPECT_EQ(BucketOf(0, 500, kWidth), std::nullopt);      // start unset
  EXPECT_EQ(BucketOf(1500, 0, kWidth), std::nullopt);     // still open
  EXPECT_EQ(BucketOf(1500, 1500, kWidth), std::nullopt);  // empty
  EXPECT_EQ(BucketOf(1500, 1400, kWidth), std::nullopt);
  EXPECT_EQ(BucketOf(1200, 1800, 0), std::nullopt);       // buckets off
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(BucketOf(max - 10, max, kWidth), std::nullopt);  // its bucket would overflow
}

TEST(Covered, BucketsWhollyInsideTheRange) {
  opmap::v1::TimeRange all;
  CoveredBuckets c = Covered(all, kWidth);
  EXPECT_TRUE(c.any && c.all);
  EXPECT_FALSE(Covered(all, 0).any);

  opmap::v1::TimeRange r;
  r.set_start_ns(1000);
  r.set_end_ns(3000);
  c = Covered(r, kWidth);
  EXPECT_TRUE(c.any);
  EXPECT_FALSE(c.all);
  EXPECT_EQ(c.first, 1000);  // buckets 1000 and 2000
  EXPECT_EQ(c.last, 2000);
  r.set_start_ns(1001);
  r.set_end_ns(2999);
  EXPECT_FALSE(Covered(r, kWidth).any);  // cuts through both
  r.set_end_ns(3000);
  c = Covered(r, kWidth);
  EXPECT_TRUE(c.any);  // bucket 2000 only
  EXPECT_EQ(c.first, 2000);
  EXPECT_EQ(c.last, 2000);
  r.set_start_ns(-2500);
  r.set_end_ns(-499);
  c = Covered(r, kWidth);
  EXPECT_TRUE(c.any);  // bucket -2000 only ([-1000, 0) ends past -499)
  EXPECT_EQ(c.first, -2000);
  EXPECT_EQ(c.last, -2000);
  r.set_start_ns(std::numeric_limits<int64_t>::max() - 5000);
  r.set_end_ns(std::numeric_limits<int64_t>::max());
  c = Covered(r, kWidth);
  EXPECT_TRUE(c.any);
  EXPECT_GE(c.first, r.start_ns());
  EXPECT_LE(c.last, r.end_ns() - kWidth);
  EXPECT_EQ(c.first % kWidth, 0);
  r.set_start_ns(std::numeric_limits<int64_t>::min());
  r.set_end_ns(std::numeric_limits<int64_t>::min() + 10);
  EXPECT_FALSE(Covered(r, kWidth).any);
}

struct Session {
  std::string id, host, revision, team;
  int64_t start, end;
  std::vector<analysis::RollupRow> rows;
};

// Sessions with windows inside buckets, across boundaries, on boundaries, unset, open
// and empty; values with zeros and spans wide enough to fold the sketch (> 2048 bins).
std::vector<Session> MakeSessions() {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(std::log(5000.0), 1.0);
  auto values = [&](int n) {
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) v.push_back(static_cast<int64_t>(dist(rng)));
    return v;
  };
  std::vector<Session> out;
  for (int i = 0; i < 80; ++i) {
    Session s;
    s.id = "s" + std::to_string(i);
    s.host = i % 3 == 0 ? "host-b" : "host-a";
    s.revision = i % 4 == 0 ? "r2" : "r1";
    s.team = i % 5 == 0 ? "b" : "a";
    s.start = 1 + static_cast<int64_t>(rng() % 9000);
    s.end = s.start + 1 + static_cast<int64_t>(rng() % (i % 2 == 0 ? 300 : 1500));
    switch (i % 16) {
      case 3: s.start = 2000, s.end = 3000; break;  // exactly one bucket
      case 5: s.start = 0, s.end = 700; break;      // start unset
      case 7: s.end = 0; break;                     // still open
      case 9: s.end = s.start; break;               // empty
      case 11: s.start = 4000, s.end = 4001; break;
      case 13: s.start = 3999, s.end = 4001; break;  // across 4000 by 1 ns
    }
    s.rows.push_back(Row(RollupSubject::kKernel, "matmul", "aten::mm", "gemm", values(40)));
    s.rows.push_back(Row(RollupSubject::kKernel, "attention", "sdpa", "flash", values(7)));
    s.rows.push_back(Row(RollupSubject::kKernel, "matmul", "aten::mm", "wide",
                         i % 2 == 0 ? std::vector<int64_t>{0, 1, 3}
                                    : std::vector<int64_t>{int64_t{1} << 40, 0}));
    if (i % 6 == 0) {
      s.rows.push_back(Row(RollupSubject::kKernel, "norm", "", "ln", values(3)));
    }
    s.rows.push_back(Row(RollupSubject::kOperatorGpu, "matmul", "aten::mm", "", values(20)));
    out.push_back(std::move(s));
  }
  return out;
}

// The sessions as last batches with their rollups, ready to commit (the commits point
// into `rollups` and `batches`, which must outlive them).
std::vector<BatchCommit> MakeCommits(const std::vector<Session>& sessions,
                                     std::vector<analysis::SessionRollup>& rollups,
                                     std::vector<opmap::v1::Batch>& batches) {
  rollups.assign(sessions.size(), {});
  batches.assign(sessions.size(), {});
  std::vector<BatchCommit> commits;
  for (size_t i = 0; i < sessions.size(); ++i) {
    const Session& s = sessions[i];
    rollups[i].rows = s.rows;  // no GPU events: the window stays the batches'
    BatchSpec spec;
    spec.session = s.id;
    spec.host = s.host;
    spec.revision = s.revision;
    spec.labels = {{"team", s.team}};
    spec.window_start_ns = s.start;
    spec.window_end_ns = s.end;
    spec.last = true;
    batches[i] = MakeBatch(spec);
    commits.push_back(BatchCommit{&batches[i], s.id, 10, 1, 1, &rollups[i]});
  }
  return commits;
}

// Commits `group` sessions at a time (Store::CommitBatches).
void AddSessions(Store& store, const std::vector<Session>& sessions, size_t group = 1) {
  std::vector<analysis::SessionRollup> rollups;
  std::vector<opmap::v1::Batch> batches;
  std::vector<BatchCommit> commits = MakeCommits(sessions, rollups, batches);
  for (size_t first = 0; first < commits.size(); first += group) {
    std::vector<const BatchCommit*> some;
    for (size_t i = first; i < std::min(commits.size(), first + group); ++i) {
      some.push_back(&commits[i]);
    }
    std::vector<absl::StatusOr<CommitOutcome>> outcomes = store.CommitBatches(some);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      ASSERT_EQ(outcomes[i].value(), CommitOutcome::kStored) << sessions[first + i].id;
    }
  }
}

std::unique_ptr<SqliteStore> OpenWithWidth(const std::string& path, int64_t width) {
  SqliteStoreOptions o;
  o.rollup_bucket_ns = width;
  absl::StatusOr<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(path, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : nullptr;
}

// The range points: bucket boundaries, just around them, and beyond every window.
std::vector<opmap::v1::TimeRange> Ranges() {
  const std::vector<int64_t> points = {-5000, 1,    999,  1000, 1001, 1999, 2000, 2500,
                                       3000,  3999, 4000, 4001, 5000, 7000, 9800,
                                       int64_t{1} << 62};
  std::vector<opmap::v1::TimeRange> out(1);  // 0/0: unbounded
  for (int64_t a : points) {
    for (int64_t b : points) {
      if (a >= b) continue;
      out.emplace_back().set_start_ns(a);
      out.back().set_end_ns(b);
    }
  }
  return out;
}

// The kernel count of the sessions a range selects, by the overlap rule (store.h).
uint64_t ExpectedKernels(const std::vector<Session>& sessions, const opmap::v1::TimeRange& r) {
  const bool all = r.start_ns() == 0 && r.end_ns() == 0;
  uint64_t n = 0;
  for (const Session& s : sessions) {
    if (!all && !(s.start < r.end_ns() && (s.end > r.start_ns() || s.end == 0))) continue;
    for (const auto& row : s.rows) {
      if (row.subject == RollupSubject::kKernel) n += static_cast<uint64_t>(row.count);
    }
  }
  return n;
}

class BucketSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sessions_ = MakeSessions();
    bucketed_ = OpenWithWidth(dir_.File("bucketed.db"), kWidth);
    plain_ = OpenWithWidth(dir_.File("plain.db"), 0);
    ASSERT_NE(bucketed_, nullptr);
    ASSERT_NE(plain_, nullptr);
    AddSessions(*bucketed_, sessions_);
    AddSessions(*plain_, sessions_);
  }

  // Every latency grouping and top kernels over `store` and the per-session store agree
  // exactly (rows, counts, sums, min/max, quantiles and the merged sketches), for every
  // range; and the kernel counts are those of the overlap rule.
  void ExpectSameAnswers(Store& store, const opmap::v1::Filter& filter, int range_stride = 1) {
    using G = opmap::v1::GroupBy;
    const std::vector<std::pair<opmap::v1::LatencySubject, std::vector<G>>> queries = {
        {opmap::v1::LATENCY_SUBJECT_KERNEL, {}},
        {opmap::v1::LATENCY_SUBJECT_KERNEL, {opmap::v1::GROUP_BY_LAYER_TYPE}},
        {opmap::v1::LATENCY_SUBJECT_KERNEL, {opmap::v1::GROUP_BY_KERNEL, opmap::v1::GROUP_BY_HOST}},
        {opmap::v1::LATENCY_SUBJECT_KERNEL,
         {opmap::v1::GROUP_BY_REVISION, opmap::v1::GROUP_BY_OPERATOR}},
        {opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU, {opmap::v1::GROUP_BY_OPERATOR}},
    };
    int compared = 0;
    const std::vector<opmap::v1::TimeRange> ranges = Ranges();
    for (size_t ri = 0; ri < ranges.size(); ri += range_stride) {
      const opmap::v1::TimeRange& range = ranges[ri];
      const std::string where = range.ShortDebugString() + " " + filter.ShortDebugString();
      for (const auto& [subject, group_by] : queries) {
        opmap::v1::LatencyRequest q;
        *q.mutable_range() = range;
        *q.mutable_filter() = filter;
        q.set_subject(subject);
        for (G g : group_by) q.add_group_by(g);
        for (double p : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) q.add_quantiles(p);
        q.set_include_sketch(true);
        absl::StatusOr<opmap::v1::LatencyResponse> got = store.QueryLatency(q);
        absl::StatusOr<opmap::v1::LatencyResponse> want = plain_->QueryLatency(q);
        ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
        EXPECT_TRUE(MessageDifferencer::Equals(*got, *want))
            << where << "\n got: " << got->ShortDebugString()
            << "\nwant: " << want->ShortDebugString();
        if (subject == opmap::v1::LATENCY_SUBJECT_KERNEL && filter.host().empty() &&
            filter.labels().empty()) {
          uint64_t n = 0;
          for (const auto& row : got->rows()) n += row.count();
          EXPECT_EQ(n, ExpectedKernels(sessions_, range)) << where;
        }
        ++compared;
      }
      opmap::v1::TopKernelsRequest t;
      *t.mutable_range() = range;
      *t.mutable_filter() = filter;
      absl::StatusOr<opmap::v1::TopKernelsResponse> got = store.QueryTopKernels(t);
      absl::StatusOr<opmap::v1::TopKernelsResponse> want = plain_->QueryTopKernels(t);
      ASSERT_TRUE(got.ok() && want.ok());
      EXPECT_TRUE(MessageDifferencer::Equals(*got, *want)) << where;
    }
    EXPECT_GT(compared, 500 / range_stride);
  }

  TempDir dir_;
  std::vector<Session> sessions_;
  std::unique_ptr<SqliteStore> bucketed_, plain_;
};

// A group commit merges its sessions' bucket rows in memory, once per key: the buckets
// it leaves are the ones the same sessions committed one by one leave (bucketed_), row
// for row — including a group that also holds a refused batch and a duplicate.
TEST_F(BucketSplitTest, AGroupCommitLeavesTheSameBucketsAsOneByOne) {
  std::unique_ptr<SqliteStore> grouped = OpenWithWidth(dir_.File("grouped.db"), kWidth);
  ASSERT_NE(grouped, nullptr);
  std::vector<analysis::SessionRollup> rollups;
  std::vector<opmap::v1::Batch> batches;
  std::vector<BatchCommit> commits = MakeCommits(sessions_, rollups, batches);
  opmap::v1::Batch refused = batches[0];
  refused.clear_agent_id();
  const BatchCommit bad{&refused, "x", 10, 1, 1, &rollups[0]};
  // Three groups: the refused batch and a duplicate land in the middle one.
  const size_t third = sessions_.size() / 3;
  for (size_t g = 0; g < 3; ++g) {
    std::vector<const BatchCommit*> group;
    for (size_t i = g * third; i < (g == 2 ? sessions_.size() : (g + 1) * third); ++i) {
      group.push_back(&commits[i]);
      if (g == 1 && i == g * third) group.push_back(&bad);
    }
    if (g == 1) group.push_back(&commits[g * third]);
    std::vector<absl::StatusOr<CommitOutcome>> out = grouped->CommitBatches(group);
    for (size_t k = 0; k < out.size(); ++k) {
      if (group[k] == &bad) {
        EXPECT_FALSE(out[k].ok());
      } else {
        ASSERT_TRUE(out[k].ok()) << out[k].status();
      }
    }
  }
  grouped.reset();
  const std::string dump =
      "SELECT group_concat(row, char(10)) FROM (SELECT printf('%d|%d|%s|%s|%s|%s|%d|%d|%d|%d|"
      "%d|%d|%d|%.17g|%.17g|%.17g|%s', b.subject, b.bucket_ns, r.host, r.model, r.revision, "
      "b.layer_type || '/' || b.operator || '/' || b.kernel || '/' || b.module, b.count, "
      "b.sum_ns, b.min_ns, b.max_ns, b.sketch_scale, b.sketch_offset, b.sketch_zero, "
      "b.sketch_sum, b.sketch_min, b.sketch_max, hex(b.sketch_bins)) AS row FROM rollup_buckets "
      "b JOIN resources r ON b.resource_id = r.id ORDER BY row)";
  RawDb one_by_one(dir_.File("bucketed.db"));
  RawDb group(dir_.File("grouped.db"));
  const std::string want = one_by_one.Text(dump);
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(group.Text(dump), want);
}

TEST_F(BucketSplitTest, BucketsHoldTheWhollyInsideSessionsOnly) {
  EXPECT_EQ(bucketed_->rollup_bucket_ns(), kWidth);
  EXPECT_EQ(plain_->rollup_bucket_ns(), 0);
  RawDb raw(dir_.File("bucketed.db"));
  int64_t expected_bucketed = 0;
  for (const Session& s : sessions_) expected_bucketed += BucketOf(s.start, s.end, kWidth) ? 1 : 0;
  EXPECT_GT(expected_bucketed, 20);
  EXPECT_LT(expected_bucketed, 70);  // some cross a boundary, are open, empty or unset
  EXPECT_EQ(raw.Int("SELECT count(bucket_ns) FROM sessions"), expected_bucketed);
  EXPECT_EQ(raw.Int("SELECT bucket_ns FROM sessions WHERE session = 's3'"), 2000);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sessions WHERE session = 's13' AND bucket_ns IS NULL"), 1);
  // Bucket rows add up to their sessions' rows.
  EXPECT_EQ(raw.Int("SELECT sum(count) FROM rollup_buckets WHERE subject = 0"),
            raw.Int("SELECT sum(r.count) FROM rollups r JOIN sessions s ON r.session_id = s.id "
                    "WHERE r.subject = 0 AND s.bucket_ns IS NOT NULL"));
  EXPECT_EQ(raw.Int("SELECT count(*) FROM resources"), 2 * 2 * 2);  // host × revision × team
  RawDb plain(dir_.File("plain.db"));
  EXPECT_EQ(plain.Int("SELECT count(*) FROM rollup_buckets"), 0);
  EXPECT_EQ(plain.Int("SELECT count(bucket_ns) FROM sessions"), 0);
}

TEST_F(BucketSplitTest, EveryRangeAnswersAsThePerSessionPath) {
  ExpectSameAnswers(*bucketed_, {});
}

TEST_F(BucketSplitTest, FiltersApplyToBucketsAsToSessions) {
  opmap::v1::Filter f;
  f.set_host("host-b");
  ExpectSameAnswers(*bucketed_, f);
  f.Clear();
  (*f.mutable_labels())["team"] = "b";
  f.set_revision("r1");
  ExpectSameAnswers(*bucketed_, f);
}

TEST_F(BucketSplitTest, BucketsSurviveReopen) {
  bucketed_.reset();
  bucketed_ = OpenWithWidth(dir_.File("bucketed.db"), 12345);  // the file keeps its width
  ASSERT_NE(bucketed_, nullptr);
  EXPECT_EQ(bucketed_->rollup_bucket_ns(), kWidth);
  opmap::v1::LatencyRequest q;
  EXPECT_EQ(bucketed_->QueryLatency(q)->rows(0).count(), ExpectedKernels(sessions_, {}));
}

// A v1 file (no buckets, no bucket_ns column) is migrated on open: its complete sessions
// go into buckets and every answer stays the same.
TEST_F(BucketSplitTest, VersionOneFileIsMigrated) {
  const std::string path = dir_.File("v1.db");
  {
    std::unique_ptr<SqliteStore> s = OpenWithWidth(path, 0);
    ASSERT_NE(s, nullptr);
    AddSessions(*s, sessions_);
    BatchSpec open;  // an incomplete session stays out of buckets
    open.session = "open";
    open.window_start_ns = 1500;
    open.window_end_ns = 1600;
    opmap::v1::Batch b = MakeBatch(open);
    ASSERT_TRUE(s->CommitBatch(BatchCommit{&b, "open", 10, 1, 1, nullptr}).ok());
  }
  {
    // Back to exactly the v1 schema.
    RawDb raw(path);
    for (const char* sql : {"DROP TABLE rollup_buckets", "DROP TABLE resources", "DROP TABLE meta",
                            "ALTER TABLE sessions DROP COLUMN bucket_ns", "PRAGMA user_version=1"}) {
      ASSERT_EQ(raw.Exec(sql), "") << sql;
    }
  }
  // A v1 collector wrote no commit mark (sqlite_commit_mark.h) beside its file either.
  std::remove((path + "-acked").c_str());
  std::unique_ptr<SqliteStore> migrated = OpenWithWidth(path, kWidth);
  ASSERT_NE(migrated, nullptr);
  EXPECT_EQ(migrated->rollup_bucket_ns(), kWidth);
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), SqliteStore::kSchemaVersion);
  EXPECT_EQ(raw.Int("SELECT count(bucket_ns) FROM sessions"),
            RawDb(dir_.File("bucketed.db")).Int("SELECT count(bucket_ns) FROM sessions"));
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sessions WHERE session = 'open' AND bucket_ns IS NULL"), 1);
  ExpectSameAnswers(*migrated, {});
  // The bucket rows are those ingest would have built.
  EXPECT_EQ(raw.Text("SELECT group_concat(hex(sketch_bins) || count || sum_ns, ',') FROM "
                     "(SELECT * FROM rollup_buckets ORDER BY subject, bucket_ns, layer_type, "
                     "operator, kernel, resource_id)"),
            RawDb(dir_.File("bucketed.db"))
                .Text("SELECT group_concat(hex(sketch_bins) || count || sum_ns, ',') FROM "
                      "(SELECT * FROM rollup_buckets ORDER BY subject, bucket_ns, layer_type, "
                      "operator, kernel, resource_id)"));
}

// The same split on ClickHouse (clickhouse_buckets.cc): bucket rows as aggregate states,
// merged server-side, against SQLite's per-session answers. One range in three keeps it
// short; the bucket boundaries are all among them.
class ClickHouseBucketTest : public BucketSplitTest {
 protected:
  void SetUp() override {
    BucketSplitTest::SetUp();
    if (HasFatalFailure()) return;
    if (std::getenv("OPMAP_NO_CLICKHOUSE") != nullptr) GTEST_SKIP() << "OPMAP_NO_CLICKHOUSE=1";
    absl::StatusOr<std::string> url = testing::ClickHouseUrl();
    ASSERT_TRUE(url.ok()) << url.status();
    absl::StatusOr<std::unique_ptr<Store>> store =
        OpenStore(absl::StrFormat("%s%crollup_bucket_ns=%d", *url,
                                  url->find('?') == std::string::npos ? '?' : '&', kWidth));
    ASSERT_TRUE(store.ok()) << store.status();
    clickhouse_ = std::move(store).value();
    AddSessions(*clickhouse_, sessions_, /*group=*/4);
  }
  void TearDown() override {
    if (auto* ch = dynamic_cast<ClickHouseStore*>(clickhouse_.get()); ch != nullptr) {
      const std::string on =
          ch->cluster().empty() ? "" : absl::StrFormat(" ON CLUSTER %s", ch->cluster());
      (void)ch->Execute(absl::StrFormat("DROP DATABASE IF EXISTS %s%s", ch->database(), on));
    }
  }
  std::string Scalar(const std::string& sql) {
    auto* ch = dynamic_cast<ClickHouseStore*>(clickhouse_.get());
    absl::StatusOr<std::string> r =
        ch->Execute(absl::StrReplaceAll(sql, {{"%s", ch->database()}}) + " FORMAT TSV");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : "";
  }
  std::unique_ptr<Store> clickhouse_;
};

TEST_F(ClickHouseBucketTest, BucketsHoldTheWhollyInsideSessionsAndAnswerAsSqlite) {
  int64_t expected_bucketed = 0;
  for (const Session& s : sessions_) expected_bucketed += BucketOf(s.start, s.end, kWidth) ? 1 : 0;
  EXPECT_EQ(Scalar("SELECT sum(bucketed) FROM %s.sessions"), std::to_string(expected_bucketed));
  EXPECT_EQ(Scalar("SELECT bucket_ns FROM %s.sessions WHERE session = 's3'"), "2000");
  EXPECT_EQ(Scalar("SELECT bucketed FROM %s.sessions WHERE session = 's13'"), "0");
  // Bucket rows add up to their sessions' rows.
  EXPECT_EQ(Scalar("SELECT sumMerge(count) FROM %s.flush_buckets WHERE subject = 0"),
            Scalar("SELECT sum(count) FROM %s.rollups WHERE subject = 0 AND (agent, session) "
                   "GLOBAL IN (SELECT agent, session FROM %s.sessions WHERE bucketed = 1)"));
  ExpectSameAnswers(*clickhouse_, {}, 5);
  opmap::v1::Filter f;
  (*f.mutable_labels())["team"] = "b";
  f.set_revision("r1");
  ExpectSameAnswers(*clickhouse_, f, 5);
}

// Exactly once whatever a group held (clickhouse_store.h "Exactly once"): the rows of a
// flush that stored no sessions row (a collector killed mid-group), a second copy of a
// group that lost the race to the first (two collectors storing one resend), and a flush
// whose sessions rows are not all there (one shard took them, the other failed) change no
// answer. Each is planted with SQL: every row of the group that holds s3 (or s5), copied
// under another flush. Background merges may collapse two sessions rows of one session
// (ReplacingMergeTree): the answers must not depend on which copy is left.
TEST_F(ClickHouseBucketTest, OrphanOutrankedAndPartialFlushesCountOnce) {
  auto* ch = dynamic_cast<ClickHouseStore*>(clickhouse_.get());
  auto plant = [&](const std::string& session, const std::string& flush, bool sessions_rows,
                   const std::string& flush_sessions) {
    const std::string group =
        Scalar(absl::StrCat("SELECT min(flush) FROM %s.sessions WHERE session = '", session, "'"));
    for (const char* table : {"rollups", "device_times", "session_counters", "session_drops",
                              "session_power", "session_unavailable", "events", "flush_buckets",
                              "sessions"}) {
      if (!sessions_rows && std::string_view(table) == "sessions") continue;
      std::vector<std::string> columns = absl::StrSplit(
          // (18.16's system.columns lists a table's columns in order and has no position.)
          Scalar(absl::StrCat("SELECT arrayStringConcat(groupArray(name), ',') FROM "
                              "system.columns WHERE database = '%s' AND table = '",
                              table, "'")),
          ',');
      std::vector<std::string> values = columns;
      for (std::string& v : values) {
        if (v == "flush") v = flush;
        if (v == "flush_sessions") v = flush_sessions;
      }
      absl::StatusOr<std::string> r = ch->Execute(absl::StrCat(
          "INSERT INTO ", ch->database(), ".", table, " (", absl::StrJoin(columns, ", "),
          ") SELECT ", absl::StrJoin(values, ", "), " FROM ", ch->database(), ".", table,
          " WHERE flush = ", group));
      ASSERT_TRUE(r.ok()) << table << ": " << r.status();
    }
  };
  {
    SCOPED_TRACE("orphan");
    plant("s3", "7", /*sessions_rows=*/false, "flush_sessions");
    ExpectSameAnswers(*clickhouse_, {}, 5);
  }
  {
    SCOPED_TRACE("a second copy of s3's group, outranked");
    plant("s3", "18446744073709551615", /*sessions_rows=*/true, "flush_sessions");
    ExpectSameAnswers(*clickhouse_, {}, 5);
  }
  {
    SCOPED_TRACE("a copy of s5's group outranking it, one sessions row short");
    plant("s5", "1", /*sessions_rows=*/true, "flush_sessions + 1");
    ExpectSameAnswers(*clickhouse_, {}, 5);
  }
}

}  // namespace
}  // namespace opmap::collector
