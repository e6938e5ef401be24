// EventSpill: a trace's events in file order in, in start order out (ties in file order),
// with at most `buffer_bytes` of them in memory. Past that, the buffer is sorted and written
// as a run to an unlinked temporary file ($TMPDIR, else /tmp), and Drain merges the runs,
// reading each a block at a time. Kineto files write all CPU ranges of a capture before its
// GPU events, so a time-ordered pass over them (analysis/summary/streaming_parts.h) needs
// this sort; its memory is the buffer (up to about three times it: each kind's array keeps
// the pages it filled) plus one block per run. Where $TMPDIR is a tmpfs, the runs are in
// memory too: point TMPDIR at a disk for traces larger than memory.
#ifndef OPMAP_CLI_EVENT_SPILL_H_
#define OPMAP_CLI_EVENT_SPILL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/model/trace.h"
#include "analysis/summary/streaming_parts.h"

namespace opmap::cli {

class EventSpill : public analysis::EventConsumer {
 public:
  static constexpr size_t kBlockBytes = size_t{32} << 10;  // read per run at a time

  explicit EventSpill(size_t buffer_bytes);
  ~EventSpill() override;
  EventSpill(const EventSpill&) = delete;
  EventSpill& operator=(const EventSpill&) = delete;

  void OnGpuEvent(const analysis::GpuEvent& event) override;
  void OnApiCall(const analysis::ApiCall& call) override;
  void OnRange(const analysis::Range& range) override;

  // Hands every event to `parts` in (start, file order), then parts.Finish(). The first
  // error of the temporary file: a write error (events after it were dropped, nothing is
  // handed out), or a read error (part of the events were handed out; the caller must
  // discard the result).
  absl::Status Drain(analysis::StreamingParts& parts);

  uint64_t spilled_bytes() const { return file_size_; }
  size_t runs() const { return runs_.size(); }

 private:
  struct Key {
    int64_t start_ns;
    uint64_t seq;   // file order
    uint8_t kind;   // 0 range, 1 API call, 2 GPU event
    uint32_t index; // into the buffer of that kind
  };
  struct Run {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  class RunCursor;

  void AfterAdd();
  void SortKeys();
  absl::Status Spill();
  absl::Status OpenFile();

  size_t buffer_bytes_;
  std::vector<analysis::GpuEvent> gpu_;
  std::vector<analysis::ApiCall> calls_;
  std::vector<analysis::Range> ranges_;
  std::vector<Key> keys_;  // the buffered events in arrival order
  size_t held_bytes_ = 0;
  uint64_t seq_ = 0;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::vector<Run> runs_;
  absl::Status error_;  // sticky: the consumer calls cannot return one
};

}  // namespace opmap::cli

#endif  // OPMAP_CLI_EVENT_SPILL_H_
