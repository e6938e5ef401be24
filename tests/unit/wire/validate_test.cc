// ValidateBatch: one test per rule, each asserting the exact message, field and code the
// collector puts in its Rejection; and SessionAssembler's all-or-nothing Append.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis/wire/batch_codec.h"
#include "gtest/gtest.h"
#include "tests/unit/wire/synthetic_trace.h"

namespace opmap::analysis {
namespace {

using opmap::v1::Batch;
using opmap::v1::RejectionCode;

std::vector<Batch> EncodeSynthetic(int steps, size_t max_records) {
  BatchingOptions o;
  o.agent_id = "agent-1";
  o.session_id = "session-1";
  o.resource.set_pid(wire_testing::kPid);
  o.max_records_per_batch = max_records;
  absl::StatusOr<std::vector<Batch>> batches =
      TraceToBatches(wire_testing::MakeSyntheticTrace(steps), o);
  EXPECT_TRUE(batches.ok()) << batches.status();
  return batches.ok() ? *std::move(batches) : std::vector<Batch>{};
}

// One first batch holding every kind of row: kernels, memory ops, launches, ranges (with
// flops/bytes), counters and stalls.
Batch ValidBatch() {
  Batch b = EncodeSynthetic(6, 1000).at(0);
  opmap::v1::RangeColumns* r = b.mutable_ranges();
  for (int i = 0; i < r->start_ns_size(); ++i) {
    r->add_flops(i == 2 ? std::nan("") : 1e9 * i);  // NaN = unknown for this row
    r->add_bytes(4096.0 * i);
  }
  opmap::v1::CounterSamples* c = b.mutable_counters();
  for (int i = 0; i < 2; ++i) {
    c->add_name_id(1);
    c->add_source(opmap::v1::COUNTER_SOURCE_PERF_EVENT);
    c->add_ts_ns(wire_testing::kT0 + i);
    c->add_value(1000);
    c->add_time_enabled_ns(5);
    c->add_time_running_ns(i == 0 ? 5 : 0);
  }
  opmap::v1::StallSamples* s = b.mutable_stalls();
  s->add_function_id(2);
  s->add_reason_id(3);
  s->add_samples(10);
  s->add_total_function_id(2);
  s->add_total_samples(12);
  return b;
}

struct Rejected {
  std::string message;
  std::string field;
  RejectionCode code;
};

Rejected Validate(const Batch& b, uint32_t known_strings = 0, const BatchLimits& limits = {}) {
  std::string field = "unset";
  absl::Status s = ValidateBatch(b, known_strings, limits, &field);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return {std::string(s.message()), field, RejectionCodeFor(s)};
}

TEST(ValidateBatch, AcceptsWhatTraceToBatchesWrites) {
  uint32_t known = 0;
  for (const Batch& b : EncodeSynthetic(40, 11)) {
    absl::Status s = ValidateBatch(b, known, {});
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(RejectionCodeFor(s), opmap::v1::REJECTION_CODE_UNSPECIFIED);
    known += b.strings().strings_size();
  }
  EXPECT_TRUE(ValidateBatch(ValidBatch(), 0, {}).ok());
}

TEST(ValidateBatch, Identity) {
  Batch b = ValidBatch();
  b.clear_agent_id();
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "agent_id: empty");
  EXPECT_EQ(r.field, "agent_id");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_MISSING_IDENTITY);
  b = ValidBatch();
  b.clear_session_id();
  EXPECT_EQ(Validate(b).message, "session_id: empty");
  b = ValidBatch();
  b.set_seq(0);
  r = Validate(b);
  EXPECT_EQ(r.message, "seq: 0 is invalid (seqs start at 1)");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_MISSING_IDENTITY);
}

TEST(ValidateBatch, ColumnLengths) {
  Batch b = ValidBatch();
  ASSERT_EQ(b.kernels().start_ns_size(), 6);
  b.mutable_kernels()->mutable_grid_x()->Truncate(3);  // OPTIONAL: empty or full
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "kernels.grid_x: 3 values for 6 rows");
  EXPECT_EQ(r.field, "kernels.grid_x");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_COLUMN_LENGTH);

  b = ValidBatch();
  b.mutable_launches()->mutable_tid()->RemoveLast();  // REQUIRED
  EXPECT_EQ(Validate(b).message, "launches.tid: 5 values for 6 rows");
  b = ValidBatch();
  b.mutable_stalls()->add_total_samples(1);
  EXPECT_EQ(Validate(b).message, "stalls.total_samples: 2 values for 1 rows");
  // An absent optional column is fine.
  b = ValidBatch();
  b.mutable_kernels()->clear_grid_x();
  EXPECT_TRUE(ValidateBatch(b, 0, {}).ok());
}

TEST(ValidateBatch, NegativeDuration) {
  Batch b = ValidBatch();
  b.mutable_kernels()->set_dur_ns(3, -5);
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "kernels.dur_ns[3]: negative duration -5");
  EXPECT_EQ(r.field, "kernels.dur_ns[3]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_INVALID_VALUE);
  b = ValidBatch();
  b.mutable_ranges()->set_dur_ns(1, -1);
  EXPECT_EQ(Validate(b).message, "ranges.dur_ns[1]: negative duration -1");
}

TEST(ValidateBatch, UnknownStringId) {
  // A later batch: 900 strings known, 10 new ones, so ids up to 909 are usable.
  Batch b = ValidBatch();
  b.mutable_strings()->clear_strings();
  b.mutable_strings()->set_base_index(900);
  for (int i = 0; i < 10; ++i) b.mutable_strings()->add_strings("s" + std::to_string(i));
  b.mutable_kernels()->set_name_id(5, 909);
  EXPECT_TRUE(ValidateBatch(b, 900, {}).ok());
  b.mutable_kernels()->set_name_id(5, 912);
  Rejected r = Validate(b, 900);
  EXPECT_EQ(r.message, "kernels.name_id[5]: string id 912 not in the session's table (910 strings)");
  EXPECT_EQ(r.field, "kernels.name_id[5]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_UNKNOWN_STRING_ID);
  b = ValidBatch();
  b.mutable_stalls()->set_reason_id(0, 4000);
  EXPECT_EQ(Validate(b).field, "stalls.reason_id[0]");
}

TEST(ValidateBatch, StringTableMustContinue) {
  Batch b = ValidBatch();
  b.mutable_strings()->set_base_index(12);
  Rejected r = Validate(b, 10);
  EXPECT_EQ(r.message,
            "strings.base_index: 12 does not continue the session's string table (expected 10)");
  EXPECT_EQ(r.field, "strings.base_index");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_STRING_TABLE_GAP);
  // Without strings base_index means nothing.
  Batch empty;
  empty.set_agent_id("a");
  empty.set_session_id("s");
  empty.set_seq(3);
  empty.mutable_strings()->set_base_index(99);
  EXPECT_TRUE(ValidateBatch(empty, 10, {}).ok());
  // The session's first string is "".
  b = ValidBatch();
  b.mutable_strings()->set_strings(0, "x");
  r = Validate(b, 0);
  EXPECT_EQ(r.message, "strings.strings[0]: id 0 must be \"\" (the first batch's table starts "
                       "with it)");
}

TEST(ValidateBatch, Limits) {
  Batch b = ValidBatch();  // 6 ranges + 6 launches + 6 kernels + 2 memcpy + 2 counters + 2 stalls
  BatchLimits limits;
  limits.max_records = 23;
  Rejected r = Validate(b, 0, limits);
  EXPECT_EQ(r.message, "batch: 24 records, over the limit of 23");
  EXPECT_EQ(r.field, "");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_TOO_LARGE);

  limits = {};
  limits.max_new_strings = 3;
  r = Validate(b, 0, limits);
  EXPECT_EQ(r.message, "strings.strings: " + std::to_string(b.strings().strings_size()) +
                           " new strings, over the limit of 3");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_TOO_LARGE);

  limits = {};
  limits.max_string_bytes = 10;
  b.mutable_strings()->set_strings(1, std::string(11, 'k'));
  r = Validate(b, 0, limits);
  EXPECT_EQ(r.message, "strings.strings[1]: 11 bytes, over the limit of 10");
  EXPECT_EQ(r.field, "strings.strings[1]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_TOO_LARGE);
}

TEST(ValidateBatch, FlopsAndBytesAreCountsOrNaN) {
  Batch b = ValidBatch();
  b.mutable_ranges()->set_flops(1, -1);
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "ranges.flops[1]: -1 is not a count (finite and >= 0, or NaN for unknown)");
  EXPECT_EQ(r.field, "ranges.flops[1]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_INVALID_VALUE);
  b = ValidBatch();
  b.mutable_ranges()->set_bytes(4, std::numeric_limits<double>::infinity());
  EXPECT_EQ(Validate(b).message,
            "ranges.bytes[4]: inf is not a count (finite and >= 0, or NaN for unknown)");
}

TEST(ValidateBatch, PayloadFitsInt64OrIsNone) {
  Batch b = ValidBatch();
  opmap::v1::RangeColumns* r = b.mutable_ranges();
  r->clear_payload();
  for (int i = 0; i < r->start_ns_size(); ++i) r->add_payload(i == 2 ? uint64_t{1} << 63 : i);
  EXPECT_TRUE(ValidateBatch(b, 0, {}).ok());  // 2^63 is payload 2^63 - 1: the largest carried
  r->set_payload(3, (uint64_t{1} << 63) + 1);
  Rejected rej = Validate(b);
  EXPECT_EQ(rej.message, "ranges.payload[3]: payload above 2^63 (payload + 1 is sent)");
  EXPECT_EQ(rej.field, "ranges.payload[3]");
  r->add_payload(7);  // one more value than rows
  EXPECT_NE(Validate(b).message.find("ranges.payload"), std::string::npos);
}

TEST(ValidateBatch, CounterRunningWithinEnabled) {
  Batch b = ValidBatch();
  b.mutable_counters()->set_time_running_ns(1, 7);
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "counters.time_running_ns[1]: 7 ns running exceeds 5 ns enabled");
  EXPECT_EQ(r.field, "counters.time_running_ns[1]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_INVALID_VALUE);
}

// Power rows: each rule with its path; a real reading passes.
TEST(ValidateBatch, PowerRows) {
  auto row = [] {
    opmap::v1::PowerSample p;
    p.set_domain(opmap::v1::POWER_DOMAIN_GPU);
    p.set_device("GPU-aaaa");
    p.set_start_ns(wire_testing::kT0);
    p.set_end_ns(wire_testing::kT0 + 2'000'000'000);
    p.set_covered_ns(2'000'000'000);
    p.set_energy_mj(700'000);  // 350 W
    p.set_method(opmap::v1::ENERGY_METHOD_COUNTER);
    p.set_reads(2);
    return p;
  };
  Batch ok = ValidBatch();
  *ok.add_power() = row();
  std::string field;
  EXPECT_TRUE(ValidateBatch(ok, 0, {}, &field).ok());
  struct Case {
    void (*mutate)(opmap::v1::PowerSample&);
    const char* message;
  };
  const Case cases[] = {
      {[](opmap::v1::PowerSample& p) { p.set_domain(opmap::v1::POWER_DOMAIN_UNSPECIFIED); },
       "power[0].domain: invalid power domain 0"},
      {[](opmap::v1::PowerSample& p) { p.clear_device(); }, "power[0].device: empty"},
      {[](opmap::v1::PowerSample& p) { p.set_end_ns(p.start_ns() - 1); },
       "power[0].end_ns: 1699999999999999999 ns is before start_ns 1700000000000000000"},
      {[](opmap::v1::PowerSample& p) { p.set_covered_ns(3'000'000'000); },
       "power[0].covered_ns: 3000000000 ns is outside [0, end_ns - start_ns = 2000000000]"},
      {[](opmap::v1::PowerSample& p) { p.set_method(opmap::v1::ENERGY_METHOD_UNSPECIFIED); },
       "power[0].method: energy without a valid method (0)"},
      {[](opmap::v1::PowerSample& p) { p.set_reads(1); },
       "power[0].reads: energy needs at least two reads"},
      {[](opmap::v1::PowerSample& p) { p.set_energy_mj(uint64_t{1} << 40); },
       "power[0].energy_mj: 1099511627776 mJ over 2000000000 ns is 549755814 W on average, "
       "over 100000 W"},
      {[](opmap::v1::PowerSample& p) { p.set_throttle_reasons(uint64_t{1} << 63); },
       "power[0].throttle_reasons: bit 63 is no NVML clocks-event reason"},
  };
  for (const Case& c : cases) {
    Batch b = ValidBatch();
    *b.add_power() = row();
    c.mutate(*b.mutable_power(0));
    Rejected r = Validate(b);
    EXPECT_EQ(r.message, c.message);
    EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_INVALID_VALUE);
  }
  Batch many = ValidBatch();
  for (int i = 0; i < 1025; ++i) *many.add_power() = row();
  Rejected r = Validate(many);
  EXPECT_EQ(r.message, "power: 1025 rows, over the limit of 1024");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_TOO_LARGE);
}

TEST(ValidateBatch, MemoryOpKind) {
  Batch b = ValidBatch();
  ASSERT_EQ(b.memory_ops().kind_size(), 2);
  b.mutable_memory_ops()->set_kind(1, static_cast<opmap::v1::MemoryOpKind>(42));
  Rejected r = Validate(b);
  EXPECT_EQ(r.message, "memory_ops.kind[1]: invalid memory op kind 42");
  EXPECT_EQ(r.field, "memory_ops.kind[1]");
  EXPECT_EQ(r.code, opmap::v1::REJECTION_CODE_INVALID_VALUE);
  b = ValidBatch();
  b.mutable_memory_ops()->set_kind(0, opmap::v1::MEMORY_OP_KIND_UNSPECIFIED);
  EXPECT_EQ(Validate(b).message, "memory_ops.kind[0]: invalid memory op kind 0");
}

TEST(ValidateBatch, CodeSurvivesThroughSessionAssembler) {
  Batch b = ValidBatch();
  b.set_seq(0);
  SessionAssembler assembler;
  std::string field;
  absl::Status s = assembler.Append(b, {}, &field);
  EXPECT_EQ(RejectionCodeFor(s), opmap::v1::REJECTION_CODE_MISSING_IDENTITY);
  EXPECT_EQ(field, "seq");
  EXPECT_EQ(RejectionCodeFor(absl::InternalError("x")), opmap::v1::REJECTION_CODE_UNSPECIFIED);
}

TEST(SessionAssembler, FailedAppendChangesNothing) {
  const std::vector<Batch> batches = EncodeSynthetic(30, 10);
  ASSERT_GE(batches.size(), 3u);
  SessionAssembler assembler;
  ASSERT_TRUE(assembler.Append(batches[0]).ok());
  const uint32_t strings = assembler.string_count();
  const int64_t records = assembler.record_count();
  const size_t model_strings = assembler.trace().strings.size();

  Batch bad = batches[1];
  ASSERT_GT(bad.strings().strings_size(), 0);  // the failure must not apply the delta
  ASSERT_GT(bad.kernels().dur_ns_size(), 0);
  bad.mutable_kernels()->set_dur_ns(0, -5);
  std::string field;
  EXPECT_FALSE(assembler.Append(bad, {}, &field).ok());
  EXPECT_EQ(field, "kernels.dur_ns[0]");
  EXPECT_EQ(assembler.string_count(), strings);
  EXPECT_EQ(assembler.record_count(), records);
  EXPECT_EQ(assembler.trace().strings.size(), model_strings);

  // The good batch with the same seq still applies, and so does the next one.
  EXPECT_TRUE(assembler.Append(batches[1]).ok());
  EXPECT_TRUE(assembler.Append(batches[2]).ok());
  EXPECT_EQ(assembler.record_count(), records + 20);
}

// ingest.proto: a rejected batch's valid delta still counts, so the session goes on.
TEST(SessionAssembler, ApplyStringDeltaKeepsLaterIdsMeaningful) {
  const std::vector<Batch> batches = EncodeSynthetic(30, 10);
  SessionAssembler assembler;
  ASSERT_TRUE(assembler.Append(batches[0]).ok());
  Batch bad = batches[1];
  bad.mutable_ranges()->set_dur_ns(0, -1);
  EXPECT_FALSE(assembler.Append(bad).ok());
  const uint32_t before = assembler.string_count();
  ASSERT_TRUE(assembler.ApplyStringDelta(bad).ok());
  EXPECT_EQ(assembler.string_count(), before + bad.strings().strings_size());
  EXPECT_TRUE(assembler.Append(batches[2]).ok());

  // A delta that does not continue the table cannot be applied.
  std::string field;
  absl::Status s = assembler.ApplyStringDelta(batches[1], {}, &field);
  EXPECT_EQ(field, "strings.base_index");
  EXPECT_EQ(RejectionCodeFor(s), opmap::v1::REJECTION_CODE_STRING_TABLE_GAP);
}

}  // namespace
}  // namespace opmap::analysis
