// One capture window of one process, from its start to its last batch: the ring is
// drained into the window's converter a bounded amount per tick (batches leave as chunks
// complete, so memory stays one chunk deep), and at the end the ring's drop counters for
// the window, what was unavailable and the CPU counter rows go out with the last batches.
// A window opened by `opmap attach` also keeps its raw records, up to the memory budget,
// and answers the attach with a capture file.
//
// Everything the producer wrote is hostile here: drop counters are believed only when
// they move forward by a plausible amount (transport::CounterDelta).
#ifndef OPMAP_AGENT_DAEMON_WINDOW_SESSION_H_
#define OPMAP_AGENT_DAEMON_WINDOW_SESSION_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/transport/ring_reader.h"
#include "agent/daemon/attach_result.h"
#include "agent/daemon/record_buffer.h"
#include "agent/daemon/window_batches.h"
#include "analysis/wire/batch_codec.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

// Where a window's batches go (the uploader's outbox). Must not block for long.
using BatchSink = std::function<void(std::vector<opmap::v1::Batch>)>;

struct WindowSessionOptions {
  pid_t pid = 0;
  uint64_t window_id = 0;
  absl::Time started;
  absl::Duration length;
  analysis::BatchingOptions batching;  // agent, session id, resource, records per batch
  size_t chunk_records = 0;
  size_t memory_budget_bytes = 0;  // for an attach's raw records
  // Set for a window an attach opened: runs once, when the window finishes.
  std::function<void(AttachResult)> attach_done;
};

// What a finished window adds to the process's and the agent's totals.
struct WindowTotals {
  int64_t records = 0;
  int64_t drops = 0;  // ring drops a user is told about (window edges excluded)
};

class WindowSession {
 public:
  WindowSession(WindowSessionOptions options, transport::RingCounters ring_before);

  // Hands at most `max_records` of what the ring holds to the converter, then any chunk
  // of batches now complete to `sink`. The status is the ring's: a poisoned ring stops
  // being read, the window still finishes with what it has.
  absl::Status Drain(transport::RingReader& ring, uint64_t max_records, const BatchSink& sink);

  // The window's last batches to `sink` and, for an attach, its answer. `unavailable`
  // and `counters` are what the library and the counter thread could not or did measure;
  // `note` (when not empty) says why the window ended early.
  WindowTotals Finish(const transport::RingReader& ring, std::vector<opmap::v1::PowerSample> power,
                      std::vector<std::pair<std::string, std::string>> unavailable,
                      std::vector<CounterRow> counters, absl::Time now,
                      const std::string& note, const std::string& metadata_text,
                      const BatchSink& sink) &&;

  uint64_t window_id() const { return options_.window_id; }
  absl::Time started() const { return options_.started; }
  absl::Time planned_end() const { return options_.started + options_.length; }
  bool for_attach() const { return static_cast<bool>(options_.attach_done); }
  bool stop_sent() const { return stop_sent_; }
  void set_stop_sent() { stop_sent_ = true; }

 private:
  WindowSessionOptions options_;
  transport::RingCounters ring_before_;
  std::unique_ptr<WindowConverter> converter_;
  RecordBuffer records_;       // raw records, kept only for an attach (its capture bytes)
  int64_t budget_drops_ = 0;   // raw records over the memory budget, for the attach's count
  bool stop_sent_ = false;
};

// The window's counter rows summed per counter: raw, scaled for multiplexing and per
// second, as the aligned table an attach prints.
std::string CountersTable(const std::vector<CounterRow>& rows,
                          const std::vector<std::pair<std::string, std::string>>& unavailable,
                          absl::Duration window);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_WINDOW_SESSION_H_
