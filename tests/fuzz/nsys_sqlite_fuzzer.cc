// libFuzzer target for Nsight Systems SQLite exports (analysis/import/nsys_importer.h):
// the input is the database image, opened with sqlite3_deserialize (read-only, no I/O)
// by ImportNsysSqlite, then analyzed as `opmap analyze` does (fuzz_analyze.h).
// Seeds: the real exports in ../shared/nsys, cut down to a few rows per table
// (tests/fuzz/make_seeds_real.py). Invariants: errors say why; a Trace that imports
// analyzes; the streamed import (StreamNsysEvents, what `opmap analyze` runs on a file)
// succeeds where the whole import does, hands out the same events, and its summary built
// in parts of a few events has the whole trace's counts and sums; the node-id merge of
// what CUDA_GRAPH_NODE_EVENTS holds matches or counts every graph launch.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "analysis/graphs/node_id_merge.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/summary_accumulator.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Counts what the streamed import hands out and summarizes it a part at a time.
class Streamed : public opmap::analysis::EventConsumer {
 public:
  explicit Streamed(opmap::analysis::SummaryAccumulator* acc) : acc_(acc) {}
  void OnStart(const opmap::analysis::TraceInfo& info, opmap::analysis::StringTable* strings) override {
    parts_.emplace(info, strings, opmap::analysis::StreamingPartsOptions{.target_events = 5},
                   [this](const opmap::analysis::Trace& part,
                          const opmap::analysis::PartRanges& ranges) {
                     acc_->Add(part, opmap::analysis::MapGpuEvents(part), &ranges);
                   });
  }
  void OnGpuEvent(const opmap::analysis::GpuEvent& e) override {
    ++gpu;
    parts_->Add(e);
  }
  void OnApiCall(const opmap::analysis::ApiCall& c) override {
    ++calls;
    parts_->Add(c);
  }
  void OnRange(const opmap::analysis::Range& r) override {
    ++ranges;
    parts_->Add(r);
  }
  void OnFinish() override { parts_->Finish(); }
  size_t gpu = 0, calls = 0, ranges = 0;

 private:
  opmap::analysis::SummaryAccumulator* acc_;
  std::optional<opmap::analysis::StreamingParts> parts_;
};

void CheckStreamedImport(const std::string& bytes, const opmap::analysis::Trace& whole) {
  using namespace opmap;
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return;
  }
  std::string image = bytes;  // sqlite3_deserialize wants a mutable buffer
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  if (sqlite3_deserialize(db.get(), "main", reinterpret_cast<unsigned char*>(image.data()),
                          static_cast<sqlite3_int64>(image.size()),
                          static_cast<sqlite3_int64>(image.size()),
                          SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
    fuzz::Fail("sqlite3_deserialize refused an image ImportNsysSqlite opened");
  }
  analysis::SummaryAccumulator acc;
  Streamed streamed(&acc);
  absl::StatusOr<analysis::Trace> names = analysis::StreamNsysEvents(db.get(), streamed);
  if (!names.ok()) fuzz::Fail("the streamed import failed where the whole one did not",
                              names.status().ToString());
  fuzz::Check(streamed.gpu == whole.gpu_events.size(), "streamed: GPU events");
  fuzz::Check(streamed.calls == whole.api_calls.size(), "streamed: API calls");
  fuzz::Check(streamed.ranges == whole.ranges.size(), "streamed: ranges");
  const analysis::TraceSummary s = acc.Finish(names->info);
  int64_t gpu_time = 0;
  for (const analysis::GpuEvent& g : whole.gpu_events) gpu_time += g.dur_ns;
  fuzz::Check(s.gpu_event_count == static_cast<int64_t>(whole.gpu_events.size()),
              "streamed summary: GPU events");
  fuzz::Check(s.gpu_time_ns == gpu_time, "streamed summary: GPU time");
  fuzz::Check(s.host_ranges.range_count == static_cast<int64_t>(whole.ranges.size()),
              "streamed summary: ranges");
}

// The node-id merge on hostile node tables (clone chains that loop, creations anywhere):
// every graph launch ends up matched or counted with a reason, and the merged trace maps.
void CheckNodeIdMerge(opmap::analysis::Trace& trace) {
  using namespace opmap;
  const size_t events = trace.gpu_events.size();
  const analysis::CaptureMergeReport report = analysis::MergeGraphNodeIds(trace);
  int64_t unmatched = 0;
  for (const analysis::UnmatchedGraphs& u : report.unmatched) unmatched += u.launches;
  fuzz::Check(report.matched_launches + unmatched == report.graph_launches,
              "node-id merge: every graph launch matched or counted with a reason");
  fuzz::Check(trace.gpu_events.size() == events, "node-id merge: no GPU event added or lost");
  fuzz::Check(analysis::MapGpuEvents(trace).events.size() == events,
              "node-id merge: the merged trace maps");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap;
  const std::string bytes(fuzz::AsText(data, size));
  fuzz::Check(analysis::LooksLikeSqlite(bytes) == bytes.starts_with(std::string("SQLite format 3\0", 16)),
              "LooksLikeSqlite");
  absl::StatusOr<analysis::Trace> trace = analysis::ImportNsysSqlite(bytes);
  if (!trace.ok()) {
    fuzz::CheckErrorSaysWhy(trace.status(), "ImportNsysSqlite");
    return 0;
  }
  fuzz::AnalyzeTrace(*trace);
  CheckStreamedImport(bytes, *trace);
  CheckNodeIdMerge(*trace);  // last: it changes the trace
  return 0;
}
