// libFuzzer target for what the collector does with the Batches an agent sends: parse
// (opmap::v1::Batch) -> SessionAssembler::Append (ValidateBatch, default BatchLimits)
// -> on rejection, the stored remainder (identity + string delta) as the ingest service
// builds it -> TelemetryAccumulator -> on last_in_session, MapGpuEvents + BuildRollup ->
// SqliteStore::CommitBatch into a fresh ":memory:" store; then the queries over what was
// stored, and the restart path (LoadSessionPayloads re-appended without limits).
//
// Input: one selector byte (query options), then up to kMaxBatches length-prefixed
// chunks (fuzz_util.h AppendChunk), each a serialized Batch, so one input is a sequence
// of batches of one or more sessions. Ordering follows the ingest service: a seq that is
// not last_seq + 1 is held back (skipped here), one at or below it is a duplicate.
//
// Invariants (beyond no crash / sanitizer report): a rejection carries a message and a
// RejectionCode; a batch the assembler accepted commits (CommitOutcome::kStored) and the
// store's SessionState agrees with the assembler; every stored payload re-decodes on the
// restart path into the same string count and record count (else the collector would
// answer DataLoss for that session forever).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/rollup.h"
#include "analysis/wire/batch_codec.h"
#include "collector/session_telemetry.h"
#include "collector/store/sqlite_store.h"
#include "opmap/v1/telemetry.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using opmap::fuzz::Check;
using opmap::fuzz::CheckErrorSaysWhy;
using opmap::fuzz::Fail;
using opmap::v1::Batch;

constexpr size_t kMaxBatches = 24;

struct Session {
  opmap::analysis::SessionAssembler assembler;
  opmap::collector::TelemetryAccumulator telemetry;
  uint64_t last_seq = 0;
  bool complete = false;
};

int64_t RecordsIn(const Batch& b) {
  return static_cast<int64_t>(b.kernels().start_ns_size()) + b.memory_ops().start_ns_size() +
         b.launches().start_ns_size() + b.ranges().start_ns_size();
}

// What the ingest service stores of a rejected batch (collector/ingest_service.cc
// Remainder): identity, resource, window and end flag, and the string-table delta when
// `keep_delta`, else an empty delta continuing the table.
Batch Remainder(const Batch& b, bool keep_delta, uint32_t string_count) {
  Batch out;
  out.set_agent_id(b.agent_id());
  out.set_session_id(b.session_id());
  out.set_seq(b.seq());
  *out.mutable_resource() = b.resource();
  out.set_window_start_ns(b.window_start_ns());
  out.set_window_end_ns(b.window_end_ns());
  out.set_last_in_session(b.last_in_session());
  if (keep_delta) {
    *out.mutable_strings() = b.strings();
  } else {
    out.mutable_strings()->set_base_index(string_count);
    if (string_count == 0) out.mutable_strings()->add_strings("");
  }
  return out;
}

void Ingest(opmap::collector::Store& store, Session& s, const Batch& batch, std::string bytes) {
  using namespace opmap;
  std::string field;
  absl::Status valid = s.assembler.Append(batch, analysis::BatchLimits{}, &field);
  Batch remainder;
  const Batch* stored = &batch;
  int64_t records = RecordsIn(batch);
  if (!valid.ok()) {
    CheckErrorSaysWhy(valid, "SessionAssembler::Append");
    if (analysis::RejectionCodeFor(valid) == v1::REJECTION_CODE_UNSPECIFIED) {
      Fail("a rejection without a RejectionCode", valid.ToString());
    }
    bool applied = false;
    for (bool keep_delta : {true, false}) {
      remainder = Remainder(batch, keep_delta, s.assembler.string_count());
      if (s.assembler.Append(remainder).ok()) {
        applied = true;
        break;
      }
    }
    if (!applied) return;  // nothing of it can be stored; the session stays where it was
    stored = &remainder;
    records = 0;
    bytes = remainder.SerializeAsString();
  }
  s.telemetry.Add(*stored, s.assembler);

  collector::BatchCommit commit;
  commit.batch = stored;
  commit.payload = std::move(bytes);
  commit.received_ns = static_cast<int64_t>(stored->seq());
  commit.string_count_after = s.assembler.string_count();
  commit.record_count = records;
  analysis::SessionRollup rollup;
  collector::SessionTelemetry telemetry;
  if (stored->last_in_session()) {
    analysis::MappingResult mapping = analysis::MapGpuEvents(s.assembler.trace());
    Check(mapping.events.size() == s.assembler.trace().gpu_events.size(),
          "one mapping per GPU event");
    rollup = analysis::BuildRollup(s.assembler.trace(), mapping);
    telemetry = s.telemetry.Finish(s.assembler.trace().strings);
    commit.rollup = &rollup;
    commit.telemetry = &telemetry;
  }
  absl::StatusOr<collector::CommitOutcome> outcome = store.CommitBatch(commit);
  if (!outcome.ok()) Fail("CommitBatch of an accepted batch failed", outcome.status().ToString());
  Check(*outcome == collector::CommitOutcome::kStored, "a new seq commits as kStored");
  s.last_seq = stored->seq();
  s.complete = stored->last_in_session();

  absl::StatusOr<collector::SessionState> state =
      store.GetSession(stored->agent_id(), stored->session_id());
  if (!state.ok()) Fail("GetSession after a commit", state.status().ToString());
  Check(state->last_seq == s.last_seq, "stored last_seq");
  Check(state->string_count == s.assembler.string_count(), "stored string_count");
  Check(state->complete == s.complete, "stored complete flag");
}

// The collector's restart path: the stored payloads, replayed without limits, must
// rebuild the session the assembler held.
void CheckReload(opmap::collector::Store& store, const std::pair<std::string, std::string>& key,
                 const Session& s) {
  using namespace opmap;
  absl::StatusOr<std::vector<std::string>> payloads =
      store.LoadSessionPayloads(key.first, key.second);
  if (!payloads.ok()) Fail("LoadSessionPayloads", payloads.status().ToString());
  analysis::BatchLimits unlimited;
  unlimited.max_records = SIZE_MAX;
  unlimited.max_new_strings = SIZE_MAX;
  unlimited.max_string_bytes = SIZE_MAX;
  analysis::SessionAssembler again;
  Batch b;
  for (const std::string& p : *payloads) {
    if (!b.ParseFromString(p)) Fail("a stored payload does not parse");
    absl::Status st = again.Append(b, unlimited);
    if (!st.ok()) Fail("a stored batch does not decode on reload", st.ToString());
  }
  Check(again.string_count() == s.assembler.string_count(), "reload: string count");
  Check(again.record_count() == s.assembler.record_count(), "reload: record count");
}

void RunQueries(opmap::collector::Store& store, uint8_t options) {
  using namespace opmap;
  v1::LatencyRequest latency;
  latency.set_subject(static_cast<v1::LatencySubject>(options % 5));
  if (options & 0x08) latency.add_group_by(static_cast<v1::GroupBy>((options >> 4) % 10));
  if (options & 0x80) latency.add_group_by(v1::GROUP_BY_KERNEL);
  latency.add_quantiles(0.5);
  latency.add_quantiles(0.99);
  latency.set_include_sketch(options & 0x40);
  CheckErrorSaysWhy(store.QueryLatency(latency).status(), "QueryLatency");
  CheckErrorSaysWhy(store.QueryTimeBreakdown({}).status(), "QueryTimeBreakdown");
  CheckErrorSaysWhy(store.QueryTopKernels({}).status(), "QueryTopKernels");
  v1::CountersRequest counters;
  if (options & 0x10) counters.add_group_by(v1::GROUP_BY_PID);
  if (options & 0x20) counters.add_group_by(v1::GROUP_BY_HOST);
  CheckErrorSaysWhy(store.QueryCounters(counters).status(), "QueryCounters");
  size_t visited = 0;
  absl::Status each = store.ForEachBatch({}, {}, [&](std::string_view payload) {
    Batch b;
    if (!b.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      Fail("ForEachBatch: a payload does not parse");
    }
    ++visited;
    return absl::OkStatus();
  });
  CheckErrorSaysWhy(each, "ForEachBatch");
  CheckErrorSaysWhy(store.ExpireRawBefore(INT64_MAX).status(), "ExpireRawBefore");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap;
  if (size == 0) return 0;
  const uint8_t options = data[0];
  // A fresh store per input: an input is reproducible on its own.
  absl::StatusOr<std::unique_ptr<collector::SqliteStore>> opened =
      collector::SqliteStore::Open(":memory:");
  if (!opened.ok()) Fail("SqliteStore::Open(:memory:)", opened.status().ToString());
  collector::Store& store = **opened;

  std::map<std::pair<std::string, std::string>, Session> sessions;
  for (std::string_view chunk : fuzz::SplitChunks(data + 1, size - 1, kMaxBatches)) {
    Batch batch;
    if (!batch.ParseFromArray(chunk.data(), static_cast<int>(chunk.size()))) continue;
    // The ingest service's checks before a batch reaches the assembler.
    if (batch.agent_id().empty() || batch.session_id().empty() || batch.seq() == 0) continue;
    Session& s = sessions[{batch.agent_id(), batch.session_id()}];
    if (batch.seq() != s.last_seq + 1 || s.complete) continue;  // held back / duplicate
    Ingest(store, s, batch, std::string(chunk));
  }
  for (const auto& [key, s] : sessions) {
    if (s.last_seq > 0) CheckReload(store, key, s);
  }
  RunQueries(store, options);
  return 0;
}
