// What the collector keeps of a rejected batch (collector/rejected_batch.h), against a
// real SessionAssembler.
#include "collector/rejected_batch.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "analysis/wire/batch_codec.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/proto/batch_fixtures.h"

namespace opmap::collector {
namespace {

using opmap::v1::Batch;

Batch StringsOnlyBatch(uint64_t seq, uint32_t base, std::initializer_list<const char*> strings) {
  Batch b;
  b.set_agent_id("agent-1");
  b.set_session_id("s1");
  b.set_seq(seq);
  b.mutable_strings()->set_base_index(base);
  for (const char* s : strings) b.mutable_strings()->add_strings(s);
  return b;
}

TEST(RejectedBatch, InvalidEventsKeepTheirValidDeltaAndNothingElse) {
  Batch bad = v1::testing_fixtures::MakeFullBatch(8);  // a negative duration, among others
  bad.set_seq(1);
  bad.set_last_in_session(true);
  analysis::SessionAssembler assembler;
  ASSERT_FALSE(assembler.Append(bad).ok());
  ASSERT_EQ(assembler.string_count(), 0u);  // a refused batch appends nothing

  std::optional<Batch> kept = AppendRejectedRemainder(bad, assembler, {});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->strings().strings_size(), bad.strings().strings_size());
  EXPECT_EQ(assembler.string_count(), static_cast<uint32_t>(bad.strings().strings_size()));
  EXPECT_EQ(assembler.record_count(), 0);
  EXPECT_EQ(analysis::EventRecordCount(*kept), 0);
  EXPECT_EQ(kept->agent_id(), bad.agent_id());
  EXPECT_EQ(kept->session_id(), bad.session_id());
  EXPECT_EQ(kept->seq(), 1u);
  EXPECT_EQ(kept->window_start_ns(), bad.window_start_ns());
  EXPECT_EQ(kept->window_end_ns(), bad.window_end_ns());
  EXPECT_TRUE(kept->last_in_session());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(kept->resource(), bad.resource()));
}

TEST(RejectedBatch, AnInvalidDeltaIsReplacedByAnEmptyOneContinuingTheTable) {
  analysis::SessionAssembler assembler;
  ASSERT_TRUE(assembler.Append(StringsOnlyBatch(1, 0, {"", "gemm"})).ok());
  const Batch gap = StringsOnlyBatch(2, 7, {"relu"});  // base_index 7, the table holds 2
  std::string field;
  ASSERT_FALSE(assembler.Append(gap, {}, &field).ok());
  EXPECT_EQ(field, "strings.base_index");

  std::optional<Batch> kept = AppendRejectedRemainder(gap, assembler, {});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->strings().base_index(), 2u);
  EXPECT_EQ(kept->strings().strings_size(), 0);
  EXPECT_EQ(assembler.string_count(), 2u);
  // The next batch continues the table where it was.
  EXPECT_TRUE(assembler.Append(StringsOnlyBatch(3, 2, {"relu"})).ok());
  EXPECT_EQ(assembler.string_count(), 3u);
}

TEST(RejectedBatch, AFirstBatchWithoutTheEmptyStringStartsTheTableWithIt) {
  analysis::SessionAssembler assembler;
  const Batch first = StringsOnlyBatch(1, 0, {"gemm"});  // id 0 must be ""
  ASSERT_FALSE(assembler.Append(first).ok());
  std::optional<Batch> kept = AppendRejectedRemainder(first, assembler, {});
  ASSERT_TRUE(kept.has_value());
  ASSERT_EQ(kept->strings().strings_size(), 1);
  EXPECT_EQ(kept->strings().strings(0), "");
  EXPECT_EQ(assembler.string_count(), 1u);
}

TEST(RejectedBatch, RejectionCauseDropsOnlyTheFieldItNames) {
  const absl::Status st = absl::InvalidArgumentError("kernels.dur_ns[3]: negative duration -5");
  EXPECT_EQ(RejectionCause(st, "kernels.dur_ns[3]"), "negative duration -5");
  EXPECT_EQ(RejectionCause(st, "kernels.dur_ns[4]"), "kernels.dur_ns[3]: negative duration -5");
  EXPECT_EQ(RejectionCause(absl::InvalidArgumentError("batch: 9 records, over the limit of 8"), ""),
            "9 records, over the limit of 8");
}

TEST(RejectedBatch, DeterministicBytesDoNotDependOnLabelOrder) {
  Batch a = StringsOnlyBatch(1, 0, {""});
  Batch b = a;
  for (int k = 0; k < 16; ++k) {
    (*a.mutable_resource()->mutable_labels())["key-" + std::to_string(k)] = "v";
    (*b.mutable_resource()->mutable_labels())["key-" + std::to_string(15 - k)] = "v";
  }
  EXPECT_EQ(DeterministicBytes(a), DeterministicBytes(b));
  Batch parsed;
  ASSERT_TRUE(parsed.ParseFromString(DeterministicBytes(a)));
  EXPECT_EQ(parsed.resource().labels_size(), 16);
}

}  // namespace
}  // namespace opmap::collector
