// The collector's memory against hostile peers: bytes held, not just records, and the
// default limits' bound (docs/security.md), with the real opmap-collector.

#include <cstdio>
#include <string>

#include "tests/integration/collector_hostile_fixture.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;
using hostile::CollectorHostileTest;
using hostile::KernelBatch;
using hostile::Stream;
using hostile::kFleetToken;
using opmap::v1::Ack;
using opmap::v1::Batch;

// The held-records limit counted records, not bytes: one agent token
// held 6 GB with one-record batches carrying ~57 MiB of strings each. Bytes are now held
// to --max-session-bytes per session (TOO_LARGE) and --max-held-bytes in all
// (RESOURCE_EXHAUSTED), and the collector's memory stays near the bound.
TEST_F(CollectorHostileTest, StringBytesAreBoundedNotJustRecords) {
  StartCollector({"--max-held-bytes", "40000000", "--max-session-bytes", "20000000"});
  // One kernel and 128 strings of 60,000 bytes: ~7.7 MB a batch.
  auto fat = [](const std::string& session, uint64_t seq) {
    Batch b = KernelBatch("a", session, seq, 1, false);
    if (seq > 1) b.mutable_strings()->set_base_index(2 + 128 * (seq - 1));  // after ours
    for (int i = 0; i < 128; ++i) b.mutable_strings()->add_strings(std::string(60000, 'a' + i % 26));
    return b;
  };
  {
    Stream s(Channel(), kAgentToken);
    std::optional<Ack> ack = s.Send(fat("s1", 1));
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(ack->rejected_size(), 0);
    ack = s.Send(fat("s1", 2));
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(ack->rejected_size(), 0);
    ack = s.Send(fat("s1", 3));  // 23 MB in one session: over --max-session-bytes
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(ack->rejected_size(), 1);
    EXPECT_EQ(ack->rejected(0).code(), opmap::v1::REJECTION_CODE_TOO_LARGE);
    EXPECT_THAT(ack->rejected(0).message(), HasSubstr("--max-session-bytes"));
    EXPECT_TRUE(s.Finish().ok());
  }
  // More sessions, each under its own limit: all together pass --max-held-bytes.
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    Stream s(Channel(), kAgentToken);
    if (!s.Send(fat(absl::StrCat("more", i), 1))) {
      grpc::Status st = s.Finish();
      EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_THAT(st.error_message(), HasSubstr("--max-held-bytes"));
      ++refused;
      continue;
    }
    EXPECT_TRUE(s.Finish().ok());
  }
  EXPECT_GE(refused, 7) << "40 MB hold five batches of 7.7 MB at most";
  const double rss = PeakRssMiB(collector_->pid());
  EXPECT_LT(rss, 400) << "collector peak RSS " << rss << " MiB for a 40 MB budget";
  std::printf("held bytes: %d of 10 sessions refused; collector peak RSS %.0f MiB\n", refused, rss);
  WellBehavedSessionIsStored("after-the-bytes");
}

// With the default limits the collector's RSS stays under the bound
// docs/security.md states (1 GiB) whatever authenticated peers send: the byte budget
// filled with one-record batches of long strings, and the record budget with kernels.
TEST_F(CollectorHostileTest, DefaultLimitsHoldTheCollectorUnderOneGiB) {
  StartCollector();
  auto fat = [](const std::string& session) {
    Batch b = KernelBatch("a", session, 1, 1, false);
    for (int i = 0; i < 128; ++i) b.mutable_strings()->add_strings(std::string(60000, 'a' + i % 26));
    return b;
  };
  // Records first: sessions of 400,000 kernels each until --max-held-records refuses.
  int held_many = 0, held_fat = 0, refused = 0;
  for (int i = 0; i < 12; ++i) {
    Stream s(Channel(), kAgentToken);
    if (s.Send(KernelBatch("a", absl::StrCat("many", i), 1, 400000, false))) {
      ++held_many;
    } else {
      ++refused;
    }
    (void)s.Finish();
  }
  EXPECT_EQ(held_many, 7) << "3,000,000 records hold seven sessions of 400,000";
  for (int i = 0; i < 45; ++i) {  // 45 x 7.7 MB = 346 MB against --max-held-bytes 256 MiB
    Stream s(Channel(), kAgentToken);
    if (s.Send(fat(absl::StrCat("fat", i)))) ++held_fat; else ++refused;
    (void)s.Finish();
  }
  EXPECT_GT(held_fat, 20);
  EXPECT_LT(held_fat, 45);
  const double rss = PeakRssMiB(collector_->pid());
  std::printf("default limits: %d sessions of 400,000 kernels and %d of 7.7 MB strings held, "
              "%d batches refused; peak RSS %.0f MiB\n",
              held_many, held_fat, refused, rss);
  EXPECT_LT(rss, 1024) << "collector peak RSS " << rss << " MiB under the default limits";
  WellBehavedSessionIsStored("after-the-defaults");
}

}  // namespace
}  // namespace opmap::testing
