#include "agent/daemon/window_session.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/import/capture_import.h"
#include "agent/daemon/capture_encoding.h"
#include "abi/ring_protocol.h"
#include "analysis/stats/multiplex.h"
#include "common/text/aligned_table.h"
#include "common/text/printable.h"

namespace opmap::agent {

WindowSession::WindowSession(WindowSessionOptions options, transport::RingCounters ring_before)
    : options_(std::move(options)), ring_before_(ring_before) {
  converter_ = std::make_unique<WindowConverter>(options_.pid, options_.batching,
                                                 options_.chunk_records);
}

absl::Status WindowSession::Drain(transport::RingReader& ring, uint64_t max_records,
                                  const BatchSink& sink) {
  const bool keep_raw = for_attach();
  absl::StatusOr<uint64_t> n = ring.Drain([&](std::span<const uint8_t> rec) {
    converter_->Add(rec);
    if (keep_raw) {
      if (records_.bytes() + rec.size() > options_.memory_budget_bytes) {
        ++budget_drops_;  // over the attach's memory budget: counted, never silently lost
      } else {
        records_.Append(rec);
      }
    }
    return true;
  }, max_records);
  absl::StatusOr<std::vector<opmap::v1::Batch>> chunk = converter_->TakeChunk();
  if (!chunk.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d window %llu: chunk not sent: %s\n", options_.pid,
                 static_cast<unsigned long long>(options_.window_id),
                 std::string(chunk.status().message()).c_str());
  } else if (!chunk->empty()) {
    sink(std::move(*chunk));
  }
  return n.status();
}

WindowTotals WindowSession::Finish(const transport::RingReader& ring,
                                   std::vector<opmap::v1::PowerSample> power,
                                   std::vector<std::pair<std::string, std::string>> unavailable,
                                   std::vector<CounterRow> counters, absl::Time now,
                                   const std::string& note, const std::string& metadata_text,
                                   const BatchSink& sink) && {
  const transport::RingCounters after = ring.Counters();
  WindowTail tail;
  WindowTotals totals;
  for (int c = 0; c < static_cast<int>(ring::kDropCauseCount); ++c) {
    if (const char* name = analysis::DropCounterName(c)) {
      // The producer writes these counters: a hostile one may move them backwards or by
      // 2^63. Only a forward move within kMaxDropsPerWindow is believed.
      const int64_t n = transport::CounterDelta(after.drops[c], ring_before_.drops[c]);
      tail.ring_drops.emplace_back(name, n);
      // A pop whose push came before the window is the window's edge, not a loss: it is
      // reported by cause but not added to the drops a user is told about.
      if (c != ring::kUnmatchedPop) totals.drops = transport::SaturatingAdd(totals.drops, n);
    }
  }
  // Records over an attach's budget still go out in the batches; only the attach's local
  // capture lacks them, and its outcome counts them as drops.
  tail.unavailable = std::move(unavailable);
  if (!note.empty()) tail.unavailable.emplace_back("window end", note);
  tail.counters = std::move(counters);
  tail.power = std::move(power);
  totals.records = converter_->records();
  absl::StatusOr<std::vector<opmap::v1::Batch>> last =
      std::move(*std::exchange(converter_, nullptr)).Finish(tail);

  if (options_.attach_done) {
    AttachResult r;
    r.pid = options_.pid;
    r.window = now - options_.started;
    r.records = totals.records;
    r.drops = transport::SaturatingAdd(totals.drops, budget_drops_);
    r.counters = CountersTable(tail.counters, tail.unavailable, r.window);
    absl::StatusOr<std::string> bytes =
        EncodeCapture(options_.pid, ring.capacity(), metadata_text, records_, after);
    if (bytes.ok()) {
      r.outcome = "captured";
      r.message = note.empty() ? "window complete" : note;
      r.capture = std::move(*bytes);
    } else {
      r.outcome = "error";
      r.message = std::string(bytes.status().message());
    }
    std::exchange(options_.attach_done, nullptr)(std::move(r));
  }
  records_.Release();
  if (!last.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d window %llu: not sent: %s\n", options_.pid,
                 static_cast<unsigned long long>(options_.window_id),
                 std::string(last.status().message()).c_str());
  } else {
    sink(std::move(*last));
  }
  return totals;
}

std::string CountersTable(const std::vector<CounterRow>& rows,
                          const std::vector<std::pair<std::string, std::string>>& unavailable,
                          absl::Duration window) {
  struct Sum {
    opmap::v1::CounterSource source;
    int64_t value = 0, enabled = 0, running = 0;
  };
  std::map<std::string, Sum> sums;
  for (const CounterRow& r : rows) {
    Sum& s = sums[r.name];
    s.source = r.source;
    s.value += r.value;
    s.enabled += r.time_enabled_ns;
    s.running += r.time_running_ns;
  }
  text::AlignedTable table({"counter", "source", "value", "scaled", "per_second"},
                           {false, false, true, true, true});
  for (const auto& [name, s] : sums) {
    const char* source = s.source == opmap::v1::COUNTER_SOURCE_PAPI ? "papi" : "perf_event";
    const std::optional<double> scaled = analysis::ScaleMultiplexed(s.value, s.enabled, s.running);
    if (!scaled.has_value()) {
      table.Add({text::Printable(name), source, absl::StrCat(s.value),
                 "unavailable: never scheduled on the PMU", ""});
      continue;
    }
    table.Add({text::Printable(name), source, absl::StrCat(s.value), absl::StrFormat("%.0f", *scaled),
               absl::StrFormat("%.1f", *scaled / std::max(1e-9, absl::ToDoubleSeconds(window)))});
  }
  std::string out = table.Render();
  if (sums.empty()) out += "(no counter samples in the window)\n";
  for (const auto& [what, why] : unavailable) {
    if (what.starts_with("counter")) absl::StrAppendFormat(&out, "unavailable: %s: %s\n", what, why);
  }
  return out;
}

}  // namespace opmap::agent
