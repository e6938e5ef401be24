// libFuzzer target for what the collector does with the Batches an agent sends: parse
// (opmap::v1::Batch) -> IngestService::HandleBatch, the collector's own ingest path
// (identity and seq checks, validation, the stored remainder of a rejected batch,
// telemetry, the rollup on last_in_session, the commit) into an emptied ":memory:"
// SqliteStore; then the queries over what was stored, and the restart path
// (LoadSessionPayloads re-appended without limits).
//
// Input: one selector byte (query options), then up to kMaxBatches length-prefixed
// chunks (fuzz_util.h AppendChunk), each a serialized Batch, so one input is a sequence
// of batches of one or more sessions, in any order (gaps, duplicates, after-the-end).
//
// Invariants (beyond no crash / sanitizer report): HandleBatch never fails on an
// in-memory store; a rejection carries a message and a RejectionCode; the ack's
// durable_seq is what the store holds; every stored payload re-decodes on the restart
// path into the string count the store recorded.
#include <cstddef>
#include <cstdint>
#include <set>
#include <memory>
#include <string>
#include <utility>

#include "analysis/wire/batch_codec.h"
#include "collector/auth.h"
#include "collector/ingest_service.h"
#include "collector/metrics.h"
#include "collector/store/sqlite/sqlite_store.h"
#include "opmap/v1/telemetry.pb.h"
#include "tests/fuzz/fuzz_util.h"
#include "google/protobuf/stubs/logging.h"

namespace {

using opmap::fuzz::Check;
using opmap::fuzz::CheckErrorSaysWhy;
using opmap::fuzz::Fail;
using opmap::v1::Batch;

constexpr size_t kMaxBatches = 24;

// One batch through the collector's own ingest path (validation, the stored remainder of
// a rejected batch, telemetry, rollup, commit), then what the store says of its session.
void Ingest(opmap::collector::IngestService& ingest, opmap::collector::Store& store,
            const Batch& batch, std::string bytes) {
  using namespace opmap;
  absl::StatusOr<v1::Ack> ack = ingest.HandleBatch(batch, &bytes);
  // Only the store failing (UNAVAILABLE) or a budget refusal may end a stream here; an
  // in-memory store under default limits must never.
  if (!ack.ok()) Fail("HandleBatch failed on an in-memory store", ack.status().ToString());
  for (const v1::Rejection& r : ack->rejected()) {
    Check(!r.message().empty(), "a rejection carries a message");
    Check(r.code() != v1::REJECTION_CODE_UNSPECIFIED, "a rejection carries a RejectionCode");
  }
  absl::StatusOr<collector::SessionState> state =
      store.GetSession(batch.agent_id(), batch.session_id());
  if (!state.ok()) Fail("GetSession after a batch", state.status().ToString());
  Check(state->last_seq == ack->durable_seq(), "the ack's durable_seq is what the store holds");
}

// The collector's restart path: every stored payload, replayed without limits, must
// decode into the string count the store recorded (else the collector would answer
// DataLoss for that session forever).
void CheckReload(opmap::collector::Store& store, const std::pair<std::string, std::string>& key) {
  using namespace opmap;
  absl::StatusOr<collector::SessionState> state = store.GetSession(key.first, key.second);
  if (!state.ok()) Fail("GetSession", state.status().ToString());
  if (state->last_seq == 0) return;
  absl::StatusOr<std::vector<std::string>> payloads =
      store.LoadSessionPayloads(key.first, key.second);
  if (!payloads.ok()) Fail("LoadSessionPayloads", payloads.status().ToString());
  Check(payloads->size() == state->last_seq, "one stored payload per seq");
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
  Check(again.string_count() == state->string_count, "reload: string count");
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
  v1::PowerRequest power;
  if (options & 0x10) power.add_group_by(v1::GROUP_BY_SESSION);
  if (options & 0x20) power.add_group_by(v1::GROUP_BY_REVISION);
  CheckErrorSaysWhy(store.QueryPower(power).status(), "QueryPower");
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

// Protobuf logs one line per string field that is not UTF-8 (a parse the fuzzer makes
// fail on purpose most of the time); writing them cost about a tenth of each run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int,
                                     const std::string&) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap;
  if (size == 0) return 0;
  const uint8_t options = data[0];
  // One store for the process, emptied before each input: an input is reproducible on
  // its own, and the schema and prepared statements (most of a fresh store's cost, ~3 ms
  // under ASan) are paid once.
  static collector::SqliteStore* const shared = [] {
    absl::StatusOr<std::unique_ptr<collector::SqliteStore>> opened =
        collector::SqliteStore::Open(":memory:");
    if (!opened.ok()) Fail("SqliteStore::Open(:memory:)", opened.status().ToString());
    return opened->release();
  }();
  absl::Status emptied = shared->RemoveAllRowsForTesting();
  if (!emptied.ok()) Fail("RemoveAllRowsForTesting", emptied.ToString());
  collector::Store& store = *shared;

  collector::Authenticator auth = collector::Authenticator::AllowAll();
  collector::CollectorMetrics metrics;
  collector::IngestOptions ingest_options;
  ingest_options.log = [](const std::string&) {};
  collector::IngestService ingest(&store, &auth, &metrics, ingest_options);
  std::set<std::pair<std::string, std::string>> sessions;
  for (std::string_view chunk : fuzz::SplitChunks(data + 1, size - 1, kMaxBatches)) {
    Batch batch;
    if (!batch.ParseFromArray(chunk.data(), static_cast<int>(chunk.size()))) continue;
    Ingest(ingest, store, batch, std::string(chunk));
    if (!batch.agent_id().empty() && !batch.session_id().empty()) {
      sessions.emplace(batch.agent_id(), batch.session_id());
    }
  }
  for (const auto& key : sessions) CheckReload(store, key);
  RunQueries(store, options);
  return 0;
}
