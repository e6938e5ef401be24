#include "agent/daemon/window_batches.h"

#include <map>

#include "absl/strings/match.h"
#include "analysis/import/capture_import.h"

namespace opmap::agent {
namespace {

// Appends `text` to the batch's string delta and returns its wire id. Only used on the
// session's last batch, after the encoder assigned every id before it.
uint32_t AddString(const std::string& text, opmap::v1::Batch* batch) {
  opmap::v1::StringTableDelta* d = batch->mutable_strings();
  const uint32_t id = d->base_index() + static_cast<uint32_t>(d->strings_size());
  d->add_strings(text);
  return id;
}

void AddDrop(opmap::v1::DropStage stage, const std::string& reason, int64_t n,
             opmap::v1::Batch* batch) {
  if (n <= 0) return;
  opmap::v1::DropCount* c = batch->mutable_drops()->add_counts();
  c->set_stage(stage);
  c->set_kind(opmap::v1::EVENT_KIND_UNSPECIFIED);
  c->set_count(static_cast<uint64_t>(n));
  c->set_reason(reason);
}

void AddTail(const WindowTail& tail, const analysis::TraceInfo& info, opmap::v1::Batch* last) {
  for (const auto& [name, n] : tail.ring_drops) {
    std::string reason(name);
    if (absl::StartsWith(reason, "drops.")) reason = reason.substr(6);
    AddDrop(opmap::v1::DROP_STAGE_RING, reason, n, last);
  }
  for (const auto& [what, reason] : info.unavailable) {
    opmap::v1::Unavailable* u = last->mutable_drops()->add_unavailable();
    u->set_what(what);
    u->set_reason(reason);
  }
  opmap::v1::CounterSamples* cs = last->mutable_counters();
  std::map<std::string, uint32_t> counter_ids;
  for (const CounterRow& row : tail.counters) {
    auto [it, added] = counter_ids.emplace(row.name, 0);
    if (added) it->second = AddString(row.name, last);
    cs->add_name_id(it->second);
    cs->add_source(row.source);
    cs->add_ts_ns(row.ts_ns);
    cs->add_value(row.value);
    cs->add_time_enabled_ns(row.time_enabled_ns);
    cs->add_time_running_ns(row.time_running_ns);
  }
  for (const opmap::v1::PowerSample& row : tail.power) *last->add_power() = row;
}

}  // namespace

WindowConverter::WindowConverter(pid_t pid, analysis::BatchingOptions options,
                                 size_t chunk_records)
    : chunk_records_(chunk_records),
      builder_(std::make_unique<analysis::CaptureTraceBuilder>(pid)),
      encoder_(std::make_unique<analysis::SessionBatchEncoder>(std::move(options),
                                                               builder_->strings())) {}

void WindowConverter::Add(std::span<const uint8_t> record) {
  ++records_;
  builder_->Add(std::string_view(reinterpret_cast<const char*>(record.data()), record.size()));
}

absl::StatusOr<std::vector<opmap::v1::Batch>> WindowConverter::TakeChunk() {
  if (builder_->completed_records() < chunk_records_) return std::vector<opmap::v1::Batch>{};
  const analysis::Trace chunk = builder_->TakeCompleted();
  return encoder_->Encode(chunk, /*last=*/false);
}

absl::StatusOr<std::vector<opmap::v1::Batch>> WindowConverter::Finish(const WindowTail& tail,
                                                                      analysis::Trace* out) && {
  analysis::Trace trace = analysis::FinishCaptureTrace(std::move(*builder_).Finish());
  encoder_->RebindStrings(trace.strings);  // the table moved out of the builder
  analysis::TraceInfo& info = trace.info;
  for (const auto& [name, n] : tail.ring_drops) info.counters.emplace_back(name, n);
  for (const auto& u : tail.unavailable) info.unavailable.push_back(u);
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches = encoder_->Encode(trace, /*last=*/true);
  if (!batches.ok()) return batches.status();
  AddTail(tail, info, &batches->back());
  if (out != nullptr) *out = std::move(trace);
  return batches;
}

}  // namespace opmap::agent
