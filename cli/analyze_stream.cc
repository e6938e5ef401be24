#include "cli/analyze_stream.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/summary_accumulator.h"
#include "cli/event_spill.h"
#include "cli/nsys_file.h"
#include "cli/trace_file_text.h"

namespace opmap::cli {
namespace {

// Events straight into the parts, which start when the source says what it is.
class PartsFeeder : public analysis::EventConsumer {
 public:
  explicit PartsFeeder(analysis::StreamingParts::PartFn fn, size_t part_events)
      : fn_(std::move(fn)), part_events_(part_events) {}
  void OnStart(const analysis::TraceInfo& info, analysis::StringTable* strings) override {
    parts_.emplace(info, strings, analysis::StreamingPartsOptions{.target_events = part_events_},
                   fn_);
  }
  void OnGpuEvent(const analysis::GpuEvent& e) override { parts_->Add(e); }
  void OnApiCall(const analysis::ApiCall& c) override { parts_->Add(c); }
  void OnRange(const analysis::Range& r) override { parts_->Add(r); }
  void OnFinish() override { parts_->Finish(); }
  std::optional<analysis::StreamingParts>& parts() { return parts_; }

 private:
  analysis::StreamingParts::PartFn fn_;
  size_t part_events_;
  std::optional<analysis::StreamingParts> parts_;
};


// The accumulator the parts go into, and the summary with how it was made.
class Summarizer {
 public:
  explicit Summarizer(const StreamAnalyzeOptions& options)
      : options_(options),
        budget_(stats::ValueBudget::FromBytes(options.memory_budget_bytes)),
        acc_(&budget_) {}
  analysis::StreamingParts::PartFn PartFn() {
    return [this](const analysis::Trace& part, const analysis::PartRanges& ranges) {
      acc_.Add(part, analysis::MapGpuEvents(part), &ranges);
    };
  }
  // `names`: the source's info and strings (no events).
  analysis::TraceSummary Finish(const analysis::Trace& names,
                                const analysis::StreamingPartsStats& stats) {
    analysis::TraceSummary s = acc_.Finish(names.info);
    analysis::AddStallSections(names, analysis::MapGpuEvents(names), &s);
    analysis::StreamingFacts& f = s.streaming;
    f.streamed = true;
    f.parts = stats.parts;
    f.largest_part_events = stats.largest_part_events;
    f.launches_not_held = stats.launches_not_held;
    f.late_events = stats.late_events;
    f.forced_cuts = stats.forced_cuts;
    f.calls_past_cap = stats.calls_past_cap;
    f.memory_budget_bytes = options_.memory_budget_bytes;
    f.sketched_rows = budget_.rows_sketched();
    return s;
  }

 private:
  const StreamAnalyzeOptions& options_;
  stats::ValueBudget budget_;
  analysis::SummaryAccumulator acc_;
};

// An Nsight Systems export, opened read-only in place: each table is queried in start
// order and the rows merged straight into the parts (SQLite's own sort spills to its
// temporary files), never loaded.
absl::StatusOr<analysis::TraceSummary> StreamNsysFile(const std::string& path,
                                                      const StreamAnalyzeOptions& options) {
  absl::StatusOr<NsysDb> db = OpenNsysFile(path);
  if (!db.ok()) return db.status();
  Summarizer summarizer(options);
  PartsFeeder feeder(summarizer.PartFn(), options.part_events);
  absl::StatusOr<analysis::Trace> names = analysis::StreamNsysEvents(db->get(), feeder);
  if (!names.ok()) return names.status();
  if (!feeder.parts()) return absl::InternalError("the export started no parts");
  return summarizer.Finish(*names, feeder.parts()->stats());
}

}  // namespace

bool StreamableTrace(const std::string& path) {
  return IsKinetoTraceFile(path) || IsStreamableNsysFile(path);
}

absl::StatusOr<analysis::TraceSummary> StreamAnalyzeFile(const std::string& path,
                                                         const StreamAnalyzeOptions& options) {
  if (IsNsysFile(path)) return StreamNsysFile(path, options);
  EventSpill spill(options.spill_buffer_bytes);
  analysis::KinetoImportOptions import;
  import.progress = options.progress;
  absl::StatusOr<std::unique_ptr<TraceFileText>> file = TraceFileText::Open(path);
  if (!file.ok()) return file.status();
  // info and strings; the events went to `spill`
  absl::StatusOr<analysis::Trace> names =
      analysis::ImportKinetoEvents((*file)->text(), spill, import);
  if (!names.ok()) return names.status();

  Summarizer summarizer(options);
  analysis::StreamingParts parts(names->info, &names->strings,
                                 {.target_events = options.part_events}, summarizer.PartFn());
  if (absl::Status drained = spill.Drain(parts); !drained.ok()) return drained;
  analysis::TraceSummary s = summarizer.Finish(*names, parts.stats());
  s.streaming.spilled_bytes = spill.spilled_bytes();
  s.streaming.spill_runs = static_cast<int64_t>(spill.runs());
  return s;
}

}  // namespace opmap::cli
