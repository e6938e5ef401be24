// libFuzzer target for the Kineto importer and everything `opmap analyze` runs after it:
// bytes -> ImportKinetoBytes (gzip or plain JSON) -> MapGpuEvents -> Summarize ->
// RenderAnalyzeJson / RenderAnalyzeTable / RenderAnalyzeCsv, and the streamed summary
// (parts of five events: its counts and sums must equal the whole trace's), and the graph
// capture merge (`--capture`) of the trace as a capture of itself, imported as a capture
// (no GPU event needed), then mapped; the same bytes also go to the capture folder's
// execution_details.json reader. A crash, sanitizer report,
// leak, timeout or out-of-memory anywhere on that path is a bug; an InvalidArgument or
// DataLoss status is the expected answer to garbage. The JSON report is parsed back, so
// an escaping bug in the writer counts as a crash too.
//
// Build and run: tests/fuzz/run_fuzz.sh [SECONDS] or tests/fuzz/run_all.sh (docs/fuzzing.md)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "analysis/graphs/capture_merge.h"
#include "analysis/graphs/execution_details.h"
#include "analysis/import/event_consumer.h"
#include "analysis/import/gzip.h"
#include "analysis/import/gzip_pipeline.h"
#include "analysis/import/kineto_importer.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Plain text from memory, a few bytes at a time at most (windows that end anywhere).
class MemoryText : public opmap::analysis::KinetoTextSource {
 public:
  explicit MemoryText(std::string_view text) : text_(text) {}
  absl::StatusOr<size_t> Read(char* out, size_t capacity) override {
    const size_t n = std::min(capacity, text_.size() - at_);
    std::memcpy(out, text_.data() + at_, n);
    at_ += n;
    return n;
  }
  bool done() const override { return at_ == text_.size(); }
  size_t size_hint() const override { return text_.size(); }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

class Counter : public opmap::analysis::EventConsumer {
 public:
  void OnStart(const opmap::analysis::TraceInfo&, opmap::analysis::StringTable* s) override {
    opmap::fuzz::Check(!started && s != nullptr, "OnStart once, with the table");
    started = true;
  }
  void OnGpuEvent(const opmap::analysis::GpuEvent&) override { ++gpu; }
  void OnApiCall(const opmap::analysis::ApiCall&) override { ++calls; }
  void OnRange(const opmap::analysis::Range&) override { ++ranges; }
  void OnFinish() override { finished = true; }
  bool started = false, finished = false;
  size_t gpu = 0, calls = 0, ranges = 0;
};

// The consumer import (what `opmap analyze` and `opmap import` stream through) agrees with
// the whole import: same verdict, same events.
void CheckConsumerImport(const std::string& bytes,
                         const absl::StatusOr<opmap::analysis::Trace>& whole) {
  using namespace opmap;
  Counter counter;
  absl::StatusOr<analysis::Trace> names;
  if (analysis::LooksGzipped(bytes)) {
    analysis::PipelinedGzipReader reader(bytes);
    names = analysis::ImportKinetoEvents(reader, counter);
  } else {
    MemoryText text(bytes);
    names = analysis::ImportKinetoEvents(text, counter);
  }
  fuzz::Check(names.ok() == whole.ok(), "consumer import: the same verdict as the whole import",
              names.ok() ? whole.status().ToString() : names.status().ToString());
  if (!names.ok()) return;
  fuzz::Check(counter.finished, "consumer import: OnFinish after a good trace");
  fuzz::Check(counter.gpu == whole->gpu_events.size() && counter.calls == whole->api_calls.size() &&
                  counter.ranges == whole->ranges.size(),
              "consumer import: the same events");
  fuzz::Check(names->strings.size() == whole->strings.size(), "consumer import: the same names");
}

}  // namespace

// The merge on hostile traces: the bytes imported as a capture (no GPU event needed),
// merged into the replay already imported. Every launch must end up matched or counted,
// and the merged trace must map.
void CheckCaptureMerge(const std::string& bytes, opmap::analysis::Trace& replay) {
  using namespace opmap;
  analysis::KinetoImportOptions options;
  options.allow_no_gpu_events = true;
  absl::StatusOr<analysis::Trace> capture = analysis::ImportKinetoBytes(bytes, options);
  fuzz::Check(capture.ok(), "capture import: accepts what the replay import accepted",
              capture.status().ToString());
  analysis::CaptureInput input{&*capture, "fuzz.json", analysis::BatchSizeFromFileName("bs_8.json"), ""};
  absl::StatusOr<analysis::CaptureMergeReport> report = analysis::MergeGraphCaptures(replay, {&input, 1});
  fuzz::Check(report.ok(), "capture merge: a trace and a capture always merge", report.status().ToString());
  int64_t unmatched = 0;
  for (const analysis::UnmatchedGraphs& u : report->unmatched) unmatched += u.launches;
  fuzz::Check(report->matched_launches + unmatched == report->graph_launches,
              "capture merge: every graph launch matched or counted with a reason");
  analysis::MappingResult mapping = analysis::MapGpuEvents(replay);
  fuzz::Check(mapping.events.size() == replay.gpu_events.size(), "capture merge: the merged trace maps");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(opmap::fuzz::AsText(data, size));
  (void)opmap::analysis::ParseExecutionDetails(bytes);
  absl::StatusOr<opmap::analysis::Trace> trace = opmap::analysis::ImportKinetoBytes(bytes);
  CheckConsumerImport(bytes, trace);
  if (!trace.ok()) {
    opmap::fuzz::CheckErrorSaysWhy(trace.status(), "ImportKinetoBytes");
    return 0;
  }
  opmap::fuzz::AnalyzeTrace(*trace);
  opmap::fuzz::CheckStreamedSummary(
      *trace, opmap::analysis::Summarize(*trace, opmap::analysis::MapGpuEvents(*trace)));
  CheckCaptureMerge(bytes, *trace);  // last: it changes the trace
  return 0;
}
