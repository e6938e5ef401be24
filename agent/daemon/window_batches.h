// A capture window → the Batches that carry it to the collector, converted while the
// window is open so the agent never holds a whole window: records go straight into a
// CaptureTraceBuilder (the same conversion as capture files), and every `chunk_records`
// completed records are encoded as the session's next batches (SessionBatchEncoder). At
// the window's end the rest, the stall samples and what only the agent knows — the ring's
// drop counts for the window, the agent's own drops, what was unavailable and why, the
// CPU counter rows sampled since the previous window — go out as the last batches.
#ifndef OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_
#define OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/import/capture_trace.h"
#include "analysis/model/trace.h"
#include "analysis/wire/batch_codec.h"
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

// What the agent adds to a window's last batch.
struct WindowTail {
  std::vector<std::pair<std::string, int64_t>> ring_drops;  // "drops.ring_full" → n, window only
  std::vector<std::pair<std::string, std::string>> unavailable;  // (what, reason) extra
  std::vector<CounterRow> counters;
  std::vector<opmap::v1::PowerSample> power;  // the window's devices (power_monitor.h)
};

class WindowConverter {
 public:
  WindowConverter(pid_t pid, analysis::BatchingOptions options, size_t chunk_records);

  void Add(std::span<const uint8_t> record);
  // The next batches when `chunk_records` completed records are waiting, else none.
  absl::StatusOr<std::vector<opmap::v1::Batch>> TakeChunk();
  // The window's last batches. `trace` receives what they carry, for reports.
  absl::StatusOr<std::vector<opmap::v1::Batch>> Finish(const WindowTail& tail,
                                                       analysis::Trace* trace = nullptr) &&;
  int64_t records() const { return records_; }

 private:
  size_t chunk_records_;
  int64_t records_ = 0;
  std::unique_ptr<analysis::CaptureTraceBuilder> builder_;
  std::unique_ptr<analysis::SessionBatchEncoder> encoder_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_WINDOW_BATCHES_H_
