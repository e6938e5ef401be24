#include "agent/daemon/window_batches.h"

#include <map>

#include "absl/strings/match.h"
#include "agent/capture/capture_import.h"
#include "agent/capture/capture_trace.h"
#include "analysis/wire/batch_codec.h"

namespace opmap::agent {
namespace {

// Appends `text` to the batch's string delta and returns its wire id. Only used on the
// session's last batch, after TraceToBatches assigned every id before it.
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

}  // namespace

absl::StatusOr<WindowBatches> BuildWindowBatches(const WindowInput& in) {
  capture::CaptureTraceBuilder builder(in.pid);
  for (size_t i = 0; i < in.records->size(); ++i) builder.Add((*in.records)[i]);
  WindowBatches out;
  out.trace = capture::FinishCaptureTrace(std::move(builder).Finish());
  analysis::TraceInfo& info = out.trace.info;
  for (const auto& [name, n] : in.ring_drops) info.counters.emplace_back(name, n);
  info.counters.emplace_back("drops.agent_memory_budget", in.agent_budget_drops);
  for (const auto& u : in.unavailable) info.unavailable.push_back(u);

  analysis::BatchingOptions options;
  options.agent_id = in.agent_id;
  options.session_id = in.session_id;
  options.resource = in.resource;
  options.max_records_per_batch = in.max_records_per_batch;
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches =
      analysis::TraceToBatches(out.trace, options);
  if (!batches.ok()) return batches.status();
  out.batches = std::move(*batches);

  opmap::v1::Batch& last = out.batches.back();
  for (const auto& [name, n] : in.ring_drops) {
    std::string reason(name);
    if (absl::StartsWith(reason, "drops.")) reason = reason.substr(6);
    AddDrop(opmap::v1::DROP_STAGE_RING, reason, n, &last);
  }
  AddDrop(opmap::v1::DROP_STAGE_QUEUE, "agent memory budget", in.agent_budget_drops, &last);
  for (const auto& [what, reason] : info.unavailable) {
    opmap::v1::Unavailable* u = last.mutable_drops()->add_unavailable();
    u->set_what(what);
    u->set_reason(reason);
  }
  opmap::v1::CounterSamples* cs = last.mutable_counters();
  std::map<std::string, uint32_t> counter_ids;
  for (const CounterRow& row : in.counters) {
    auto [it, added] = counter_ids.emplace(row.name, 0);
    if (added) it->second = AddString(row.name, &last);
    cs->add_name_id(it->second);
    cs->add_source(row.source);
    cs->add_ts_ns(row.ts_ns);
    cs->add_value(row.value);
    cs->add_time_enabled_ns(row.time_enabled_ns);
    cs->add_time_running_ns(row.time_running_ns);
  }
  return out;
}

}  // namespace opmap::agent
