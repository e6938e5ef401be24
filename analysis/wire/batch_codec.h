// Trace <-> wire Batches (proto/opmap/v1/telemetry.proto).
//
// Sender side (`opmap import`, later the agent): TraceToBatches splits one capture
// session's Trace into Batches of bounded size, interning names into a per-session string
// table sent as deltas, seq = 1, 2, ...; the last batch has last_in_session = true.
//
// Collector side: SessionAssembler validates each batch of one (agent, session) in seq
// order against the session's string table and appends it to a Trace; when the session
// is complete the Trace goes through the same mapping and summary code as
// `opmap analyze`. A batch that fails validation changes nothing.
//
// Conventions on the wire (see the proto): optional ids use 0 for "none"; the model uses
// kNone (-1). Thread ids are uint32 on the wire. The full model <-> wire mapping, and
// what does not travel, is listed in wire_conventions.h.
#ifndef OPMAP_ANALYSIS_WIRE_BATCH_CODEC_H_
#define OPMAP_ANALYSIS_WIRE_BATCH_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/model/trace.h"
#include "opmap/v1/ingest.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::analysis {

struct BatchingOptions {
  std::string agent_id;
  std::string session_id;
  opmap::v1::Resource resource;  // copied into every batch
  // Records (kernels + memory ops + launches + ranges) per batch, at most.
  size_t max_records_per_batch = 20000;
};

// Splits `trace` into batches in time order of the records' start. Never empty: a trace
// with no records gives one (empty, last) batch. InvalidArgument, naming the record
// (e.g. "gpu_events[12].correlation: ..."), when a value cannot travel without changing
// meaning: an id past the wire's uint32 (masking it would alias two launches and mis-map
// their kernels), a negative stream, a process/thread outside int32; and for empty
// agent_id / session_id or max_records_per_batch == 0.
absl::StatusOr<std::vector<opmap::v1::Batch>> TraceToBatches(const Trace& trace,
                                                             const BatchingOptions& options);

namespace wire_internal {
class StringEncoder;
}

// The same split, one chunk of a session at a time, for a sender that cannot hold the
// whole session (the agent converts a live window while it is open). Each chunk is a
// Trace whose names are ids in `strings` — the session's one table, which may grow
// between calls but never renumbers (its `strings` member is not read). seq and the
// string-table deltas continue across calls; a chunk without records gives no batch
// unless it is the last. Stall samples go out with the last chunk. TraceToBatches is one
// Encode(trace, /*last=*/true). Not thread-safe; `strings` must outlive the encoder.
class SessionBatchEncoder {
 public:
  SessionBatchEncoder(BatchingOptions options, const StringTable& strings);
  ~SessionBatchEncoder();
  SessionBatchEncoder(const SessionBatchEncoder&) = delete;
  SessionBatchEncoder& operator=(const SessionBatchEncoder&) = delete;

  absl::StatusOr<std::vector<opmap::v1::Batch>> Encode(const Trace& chunk, bool last);
  // The session's table moved (same contents, more maybe): encode from there on.
  void RebindStrings(const StringTable& strings);

 private:
  BatchingOptions options_;
  std::unique_ptr<wire_internal::StringEncoder> strings_;
  uint64_t next_seq_ = 1;
  bool finished_ = false;
};

// Per-batch limits the collector enforces (REJECTION_CODE_TOO_LARGE beyond them).
struct BatchLimits {
  size_t max_records = 1'000'000;
  size_t max_new_strings = 100'000;
  size_t max_string_bytes = 64 * 1024;
};

// Checks one batch alone, given how many strings its session already has. Returns
// InvalidArgument whose message starts with the field path, e.g.
// "kernels.dur_ns[3]: negative duration -5" or "strings.base_index: 12 does not continue
// the session's string table (expected 10)". `*field` (if not null) receives the path;
// a rule about the whole batch (record count) has path "" and message "batch: ...".
// RejectionCodeFor(status) gives the Rejection.code. A batch without strings may carry
// any base_index; the session's first strings must start at 0 with "".
absl::Status ValidateBatch(const opmap::v1::Batch& batch, uint32_t known_strings,
                           const BatchLimits& limits, std::string* field = nullptr);

// Kernels + memory ops + launches + ranges: the records a session's assembler holds, and
// what the collector's per-session and held-records budgets count (counter and stall rows
// are not among them; ValidateBatch's per-batch limit counts every row).
int64_t EventRecordCount(const opmap::v1::Batch& batch);

// The Rejection.code for a status returned by ValidateBatch / SessionAssembler (carried
// as a status payload); REJECTION_CODE_UNSPECIFIED for OK or any other status.
opmap::v1::RejectionCode RejectionCodeFor(const absl::Status& status);

// Accumulates the batches of one session into a Trace.
// A session's summed durations so far, per column: bounded so that no sum over them
// overflows (docs/security.md, checked arithmetic).
struct SessionDurationSums {
  int64_t kernels = 0, memory_ops = 0, launches = 0, ranges = 0, counter_enabled = 0;
};

class SessionAssembler {
 public:
  SessionAssembler() = default;
  SessionAssembler(const SessionAssembler&) = delete;
  SessionAssembler& operator=(const SessionAssembler&) = delete;

  // Validates (ValidateBatch) and appends. On error nothing is applied. Stall samples
  // are kept (Trace::stalls); counter samples are validated but not kept yet.
  absl::Status Append(const opmap::v1::Batch& batch, const BatchLimits& limits = {},
                      std::string* field = nullptr);

  // Applies only the batch's string-table delta, after validating the delta alone
  // (identity, base_index, limits). ingest.proto: a rejected batch's valid delta still
  // counts, so later batches' ids keep their meaning; the collector calls this when
  // Append fails. An error here (e.g. "strings.base_index") means the session cannot be
  // decoded any further.
  absl::Status ApplyStringDelta(const opmap::v1::Batch& batch, const BatchLimits& limits = {},
                                std::string* field = nullptr);

  uint32_t string_count() const { return static_cast<uint32_t>(wire_to_model_.size()); }
  const Trace& trace() const { return trace_; }
  Trace TakeTrace() { return std::move(trace_); }
  int64_t record_count() const;  // GPU events + launch API calls + ranges so far

 private:
  void AppendStrings(const opmap::v1::StringTableDelta& delta);

  SessionDurationSums duration_sums_;
  Trace trace_;
  std::vector<StringId> wire_to_model_;  // session string id -> trace_.strings id
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_WIRE_BATCH_CODEC_H_
