// `opmap import` of a Kineto file or an Nsight Systems export of any size: the file is read
// twice, never held (an export is opened in place and queried, nsys_file.h). The
// first pass digests its bytes (the session id, import_command.h) and parses it whole
// without keeping events, so a bad trace is refused before anything is sent and the
// resource of the first batch knows the process and the GPUs. The second pass, on a thread
// of its own, parses it again and encodes its events into batches as they come
// (SessionBatchEncoder, in file order), handed to the sender through a bounded queue.
// Memory: the names, one chunk of events and the queue.
#ifndef OPMAP_CLI_IMPORT_STREAM_H_
#define OPMAP_CLI_IMPORT_STREAM_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/import/event_consumer.h"
#include "analysis/model/trace.h"
#include "analysis/wire/batch_codec.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::cli {

// True for the files imported this way: Kineto traces and Nsight Systems exports.
bool StreamableImport(const std::string& path);

// The file's events to `consumer` (a Kineto file in file order, an export in start order);
// the Trace returned holds the info and names.
absl::StatusOr<analysis::Trace> StreamEvents(const std::string& path,
                                             analysis::EventConsumer& consumer);

struct CheckedTraceFile {
  std::string session_id;  // ImportSessionId of the file's bytes and `options`
  analysis::TraceInfo info;
  int64_t gpu_events = 0;
  int64_t records = 0;  // GPU events, API calls and ranges
};

// The first pass. Errors: the file's, or the trace's (as ImportKinetoBytes names them).
absl::StatusOr<CheckedTraceFile> CheckTraceFile(const std::string& path,
                                                std::string_view options);

class StreamedBatches {
 public:
  static constexpr size_t kQueueBatches = 16;

  // Starts the second pass at once.
  StreamedBatches(std::string path, analysis::BatchingOptions options);
  // Stops the pass if it still runs, and joins it.
  ~StreamedBatches();
  StreamedBatches(const StreamedBatches&) = delete;
  StreamedBatches& operator=(const StreamedBatches&) = delete;

  // The next batch in order; false at the end or when the pass failed (Finish says why).
  bool Next(opmap::v1::Batch* out);
  // Stops the pass if it still runs; its error, if any. A failure after the first pass
  // means the file changed between the two (the batches sent may then not make a session).
  absl::Status Finish();
  int64_t handed_out() const { return handed_out_; }

 private:
  class Producer;
  void Run(std::string path, analysis::BatchingOptions options);
  // Called by the producer; false once cancelled.
  bool Push(opmap::v1::Batch batch);
  bool cancelled() const;

  mutable std::mutex mu_;
  std::condition_variable room_, ready_;
  std::deque<opmap::v1::Batch> queue_;  // guarded by mu_
  bool done_ = false;                   // the producer finished (guarded by mu_)
  bool cancelled_ = false;              // guarded by mu_
  absl::Status status_;                 // the producer's, once done_
  int64_t handed_out_ = 0;
  std::thread thread_;
};

}  // namespace opmap::cli

#endif  // OPMAP_CLI_IMPORT_STREAM_H_
