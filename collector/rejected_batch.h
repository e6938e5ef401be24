// What the collector stores of a batch it rejects (ingest_service.h): its identity,
// resource, capture window and end flag, and its string-table delta when that is valid,
// so the session's later batches keep decoding and a resend is recognised as a
// duplicate. Its events are not kept.
#ifndef OPMAP_COLLECTOR_REJECTED_BATCH_H_
#define OPMAP_COLLECTOR_REJECTED_BATCH_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "analysis/wire/batch_codec.h"
#include "opmap/v1/ingest.pb.h"

namespace opmap::collector {

// Appends to `assembler` what is kept of a rejected `batch`: the batch without its
// events, with its own string-table delta when the assembler accepts it, else with an
// empty delta continuing the table (the session's later batches that use the refused
// strings are then rejected too). Returns what was appended, or nullopt when neither was
// accepted (the session stays where it was).
std::optional<opmap::v1::Batch> AppendRejectedRemainder(const opmap::v1::Batch& batch,
                                                        analysis::SessionAssembler& assembler,
                                                        const analysis::BatchLimits& limits);

// A batch as bytes that depend only on its content. Protobuf writes map entries (the
// resource's labels) in hash order unless told otherwise, and a resend of the same
// batch through another collector must store the same bytes (the ClickHouse engine
// deduplicates identical inserts, nothing else).
std::string DeterministicBytes(const opmap::v1::Batch& batch);

// A validation error's message without the field it names, which the Rejection carries
// apart: "kernels.dur_ns[3]: negative duration -5" -> "negative duration -5".
std::string RejectionCause(const absl::Status& status, const std::string& field);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_REJECTED_BATCH_H_
