// One finished capture window → the Batches that carry it to the collector: the records
// the library wrote go through CaptureTraceBuilder (the same path as a capture file) and
// TraceToBatches; the last batch also carries what only the agent knows — the ring's
// drop counts for the window, the agent's own drops, what was unavailable and why, and
// the CPU counter rows sampled since the previous window of this process.
#ifndef OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_
#define OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/daemon/record_buffer.h"
#include "analysis/model/trace.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

// One counter reading over an interval (an increment, not a running total).
struct CounterRow {
  std::string name;
  opmap::v1::CounterSource source = opmap::v1::COUNTER_SOURCE_UNSPECIFIED;
  int64_t ts_ns = 0;  // end of the interval
  int64_t value = 0;
  int64_t time_enabled_ns = 0;
  int64_t time_running_ns = 0;
};

struct WindowInput {
  std::string agent_id;
  std::string session_id;
  opmap::v1::Resource resource;
  pid_t pid = 0;
  const RecordBuffer* records = nullptr;  // whole ring records, ring order
  std::vector<std::pair<std::string, int64_t>> ring_drops;  // "drops.ring_full" → n, window only
  int64_t agent_budget_drops = 0;  // records the agent discarded over its memory budget
  std::vector<std::pair<std::string, std::string>> unavailable;  // (what, reason) extra
  std::vector<CounterRow> counters;
  size_t max_records_per_batch = 20000;
};

struct WindowBatches {
  std::vector<opmap::v1::Batch> batches;
  analysis::Trace trace;  // what the batches carry, for a local report
};

absl::StatusOr<WindowBatches> BuildWindowBatches(const WindowInput& input);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_
