// Pieces of ValidateBatch that SessionAssembler::ApplyStringDelta reuses. Internal to
// analysis/wire.
// Fuzzed by tests/fuzz/batch_ingest_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_WIRE_WIRE_VALIDATE_H_
#define OPMAP_ANALYSIS_WIRE_WIRE_VALIDATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "analysis/model/trace.h"
#include "analysis/wire/batch_codec.h"
#include "opmap/v1/ingest.pb.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::analysis::wire_internal {

// Bounds on values from the wire, so that no sum the collector or the reports compute
// can overflow int64: one duration <= 2^52 ns (52 days), a timestamp within ±2^62 ns,
// and a session's durations of one kind sum to at most 2^62 ns.
using analysis::kMaxDurationNs;   // analysis/model/trace.h
using analysis::kMaxTimestampNs;
inline constexpr int64_t kMaxSessionDurationSumNs = int64_t{1} << 62;

// Adds the batch's (validated) durations to `sums`; over kMaxSessionDurationSumNs in any
// column: INVALID_VALUE naming the row, and `sums` unchanged.
absl::Status AddDurations(const opmap::v1::Batch& batch, SessionDurationSums& sums,
                          std::string* field);

// InvalidArgument "<path>: <what>" ("batch: <what>" when the path is "", i.e. the whole
// batch), with `code` as a payload for RejectionCodeFor; sets `*field` to `path`.
absl::Status Reject(opmap::v1::RejectionCode code, const std::string& path,
                    std::string_view what, std::string* field);

// agent_id and session_id non-empty, seq >= 1.
absl::Status ValidateIdentity(const opmap::v1::Batch& batch, std::string* field);

// The delta continues a table of `known_strings` strings (id 0 = "" first) within limits.
absl::Status ValidateStrings(const opmap::v1::StringTableDelta& delta, uint32_t known_strings,
                             const BatchLimits& limits, std::string* field);

// Batch.power: bounded rows, valid domains and methods, spans forward in time, energy
// only with a span and at most 100 kW on average (power_validate.cc).
absl::Status ValidatePower(const opmap::v1::Batch& batch, std::string* field);

}  // namespace opmap::analysis::wire_internal

#endif  // OPMAP_ANALYSIS_WIRE_WIRE_VALIDATE_H_
