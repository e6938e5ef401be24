// The spool directory's checks, and the record and state encodings on their own.
#include "agent/spool/spool_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/spool/outbox.h"
#include "agent/spool/segment_scanner.h"
#include "agent/spool/spool_record.h"
#include "agent/spool/spool_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/spool/spool_test_util.h"

namespace opmap::agent::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(SpoolTest, MissingDirIsCreatedPrivate) {
  auto o = OpenOrDie(Options(1 << 20));
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 077, 0u);
}

TEST_F(SpoolTest, SymlinkDirIsRefused) {
  std::filesystem::create_directory(root_ + "/real", root_);
  std::filesystem::permissions(root_ + "/real", std::filesystem::perms::owner_all);
  std::filesystem::create_directory_symlink(root_ + "/real", dir_);
  absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(o.status())) << o.status();
  EXPECT_THAT(o.status().message(), HasSubstr("is a symlink"));
  EXPECT_THAT(o.status().message(), HasSubstr(dir_));
}

TEST_F(SpoolTest, GroupWritableDirIsRefused) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0770), 0);
  absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(o.status())) << o.status();
  EXPECT_THAT(o.status().message(), HasSubstr("group or others write"));
}

TEST_F(SpoolTest, DirOwnedBySomeoneElseIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir_.c_str(), 4242, 4242), 0);
  absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(o.status())) << o.status();
  EXPECT_THAT(o.status().message(), HasSubstr("owned by uid 4242"));
}

TEST_F(SpoolTest, FileInPlaceOfDirIsRefused) {
  std::ofstream(dir_) << "x";
  absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(o.status())) << o.status();
  EXPECT_THAT(o.status().message(), HasSubstr("not a directory"));
}

TEST_F(SpoolTest, SecondOutboxOnTheSameDirIsRefused) {
  auto first = OpenOrDie(Options(1 << 20));
  absl::StatusOr<std::unique_ptr<Outbox>> second = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr("in use by another process"));
  first.reset();
  EXPECT_TRUE(Outbox::Open(Options(1 << 20)).ok());
}

TEST_F(SpoolTest, SymlinkNamedLikeASegmentIsRefused) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  std::filesystem::create_symlink("/etc/passwd", dir_ + "/" + SpoolDir::SegmentName(1));
  absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(Options(1 << 20));
  ASSERT_TRUE(absl::IsFailedPrecondition(o.status())) << o.status();
  EXPECT_THAT(o.status().message(), HasSubstr("not a regular file"));
}

TEST(SpoolRecordTest, RoundTripsAndRejectsEveryTruncation) {
  const std::string payload = BatchBytes("sess", 7, 100);
  const std::string rec = EncodeRecordPrefix("sess", 7, payload) + payload;
  ASSERT_EQ(rec.size(), SpoolRecordSize(4, 100));
  ParsedRecord r = ParseRecordAt(rec, 0);
  ASSERT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.session_id, "sess");
  EXPECT_EQ(r.seq, 7u);
  EXPECT_EQ(r.payload, payload);
  EXPECT_EQ(r.size, rec.size());
  for (size_t n = 0; n < rec.size(); ++n) {
    EXPECT_EQ(ParseRecordAt(std::string_view(rec).substr(0, n), 0).outcome,
              ParseOutcome::kTruncated)
        << n;
  }
  for (size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] ^= 0x01;
    EXPECT_NE(ParseRecordAt(bad, 0).outcome, ParseOutcome::kOk) << i;
  }
}

TEST(SpoolRecordTest, ScannerResyncsAfterGarbage) {
  std::string seg;
  for (uint64_t q = 1; q <= 3; ++q) {
    const std::string p = BatchBytes("s", q, 50);
    seg += EncodeRecordPrefix("s", q, p) + p;
    if (q == 1) seg += "garbage!";  // 8 stray bytes between records 1 and 2
  }
  SegmentScan scan = ScanSegment(seg);
  ASSERT_EQ(scan.records.size(), 3u);
  EXPECT_EQ(scan.damaged_regions, 1u);
  EXPECT_EQ(scan.damaged_bytes, 8u);
  EXPECT_EQ(scan.records[2].seq, 3u);
}

TEST(SpoolStateTest, RoundTripsAndRejectsDamage) {
  SpoolState s;
  s.dropped_batches = 3;
  s.dropped_bytes = 3000;
  s.acked = {{"A", 5}, {"B", 9}};
  const std::string bytes = EncodeSpoolState(s);
  absl::StatusOr<SpoolState> back = DecodeSpoolState(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dropped_batches, 3u);
  EXPECT_EQ(back->dropped_bytes, 3000u);
  EXPECT_EQ(back->acked, s.acked);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x04;
    EXPECT_TRUE(absl::IsDataLoss(DecodeSpoolState(bad).status())) << i;
  }
  EXPECT_TRUE(absl::IsDataLoss(DecodeSpoolState(bytes.substr(0, bytes.size() - 1)).status()));
}

}  // namespace
}  // namespace opmap::agent::testing
