// DropReport against a real memory-only Outbox: every drop the outbox counts reaches the
// collector once, even when the batch carrying the counts is itself dropped.
#include "agent/daemon/drop_report.h"

#include <numeric>
#include <string>

#include "agent/spool/outbox.h"
#include "gtest/gtest.h"

namespace opmap::agent::drop_report_testing {
namespace {

constexpr size_t kBytes = 100;

DropReport::Counts Totals(const Outbox& o) {
  DropReport::Counts t{};
  const OutboxStats s = o.stats();
  std::copy(std::begin(s.dropped_by_cause), std::end(s.dropped_by_cause), t.begin());
  return t;
}

uint64_t Sum(const DropReport::Counts& c) { return std::accumulate(c.begin(), c.end(), 0ull); }

class DropReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OutboxOptions options;
    options.memory_bytes = 2 * kBytes;  // two batches; no spool: the oldest is dropped
    absl::StatusOr<std::unique_ptr<Outbox>> o = Outbox::Open(options);
    ASSERT_TRUE(o.ok()) << o.status();
    outbox_ = std::move(*o);
  }
  // A batch of its own session (a session that lost a batch loses its later ones too).
  void Push(const std::string& session) {
    ASSERT_TRUE(outbox_->Push({session, 1}, std::string(kBytes, 'x')).ok());
  }
  // What the next carrier takes, and it is pushed as `session`.
  uint64_t Carry(const std::string& session) {
    const DropReport::Counts c = report_.Take(
        Totals(*outbox_), [this](const OutboxKey& k) { return outbox_->Holds(k); });
    Push(session);
    report_.Carried({session, 1}, c);
    return Sum(c);
  }

  std::unique_ptr<Outbox> outbox_;
  DropReport report_;
};

TEST_F(DropReportTest, ALostCarriersCountsGoToTheNextCarrier) {
  for (const char* s : {"a", "b", "c"}) Push(s);  // "a" dropped
  ASSERT_EQ(outbox_->stats().dropped_batches, 1u);
  uint64_t delivered = 0;  // counts on carriers the collector gets
  const uint64_t first = Carry("d");  // "b" dropped as "d" comes in: counted later
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(report_.pending_carriers(), 1u);
  Push("e");
  Push("f");  // drops "c", then the carrier "d": its count never reaches the collector
  ASSERT_FALSE(outbox_->Holds({"d", 1}));
  ASSERT_EQ(outbox_->stats().dropped_batches, 4u);
  // The next carrier takes the lost one's count again, with the three drops since.
  // ("e" is dropped as "g" comes in.)
  const uint64_t second = Carry("g");
  EXPECT_EQ(second, 4u);
  delivered += second;  // "d" was lost; "g" is settled below
  report_.Settled("g", 1);
  ASSERT_TRUE(outbox_->Ack("g", 1).ok());
  EXPECT_EQ(report_.pending_carriers(), 0u);
  delivered += Carry("h");  // "e"
  EXPECT_EQ(delivered, outbox_->stats().dropped_batches);
  EXPECT_EQ(delivered, 5u);
}

TEST_F(DropReportTest, ASettledCarrierIsNotCountedAgainNorARefusedOneLost) {
  for (const char* s : {"a", "b", "c"}) Push(s);  // "a" dropped
  EXPECT_EQ(Carry("d"), 1u);  // drops "b"
  report_.Settled("d", 1);
  ASSERT_TRUE(outbox_->Ack("d", 1).ok());
  // Only the drop since; the acked carrier's count is not returned.
  DropReport::Counts c = report_.Take(
      Totals(*outbox_), [this](const OutboxKey& k) { return outbox_->Holds(k); });
  EXPECT_EQ(Sum(c), 1u);
  report_.Untake(c);  // its carrier refused: the next one takes it
  c = report_.Take(Totals(*outbox_), [](const OutboxKey&) { return true; });
  EXPECT_EQ(Sum(c), 1u);
  EXPECT_EQ(Sum(report_.Take(Totals(*outbox_), [](const OutboxKey&) { return true; })), 0u);
}

}  // namespace
}  // namespace opmap::agent::drop_report_testing
