// GzipChunkReader on a thread of its own: inflating and parsing a trace take about the
// same time, so on two cores the import costs the larger of the two instead of their sum.
// The inflating thread fills chunks into a bounded queue (kQueueChunks x kChunkBytes, so
// memory stays flat) and waits while it is full; Read() takes from it. Same contract as
// GzipChunkReader: fewer bytes than asked only at the end, errors sticky and returned after
// the text inflated before them.
#ifndef OPMAP_ANALYSIS_IMPORT_GZIP_PIPELINE_H_
#define OPMAP_ANALYSIS_IMPORT_GZIP_PIPELINE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/import/gzip.h"
#include "analysis/import/kineto_event_stream.h"

namespace opmap::analysis {

class PipelinedGzipReader : public KinetoTextSource {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kQueueChunks = 8;

  // `compressed` must outlive the reader. Starts inflating at once. `consumed`, when set,
  // is called on the inflating thread with the compressed bytes read so far, after each
  // chunk.
  explicit PipelinedGzipReader(std::string_view compressed,
                               std::function<void(size_t)> consumed = {});
  // Stops the inflating thread (it may be waiting for room) and joins it.
  ~PipelinedGzipReader();
  PipelinedGzipReader(const PipelinedGzipReader&) = delete;
  PipelinedGzipReader& operator=(const PipelinedGzipReader&) = delete;

  absl::StatusOr<size_t> Read(char* out, size_t capacity) override;
  bool done() const override;
  size_t size_hint() const override { return hint_; }

 private:
  // An inflated chunk: kChunkBytes of storage, `size` of them filled. The buffers of
  // chunks read are handed back to the inflating thread (spare_), so a trace of any size
  // allocates at most kQueueChunks + 1 of them and never zero-fills one.
  struct Chunk {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };
  void Inflate();

  GzipChunkReader reader_;  // used by the inflating thread only, after construction
  std::function<void(size_t)> consumed_;
  size_t hint_ = 0;
  mutable std::mutex mu_;
  std::condition_variable room_;   // the queue has room, or the reader is going away
  std::condition_variable ready_;  // a chunk, the end or an error arrived
  std::deque<Chunk> queue_;        // guarded by mu_
  std::vector<std::unique_ptr<char[]>> spare_;  // guarded by mu_
  size_t front_offset_ = 0;        // bytes of queue_.front() already read
  bool finished_ = false;          // the inflating thread is done (end or error)
  bool cancelled_ = false;
  absl::Status status_;            // the inflater's error, once finished_
  std::thread thread_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_GZIP_PIPELINE_H_
