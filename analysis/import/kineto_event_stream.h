// Streams the events of a Chrome-trace JSON document to a sink, a window at a time: gzip
// input is inflated in chunks into a small rolling buffer, plain input is read in place.
// JsonEventSplitter finds each event's bytes (and checks the grammar of everything outside
// events); simdjson On-Demand parses a batch of events (about 1 MiB) as one array, the
// bytes around the batch turned into '[' and ']' for the call and restored after.
//
// Memory: the buffer holds a few MiB plus the one unfinished event; nothing grows with the
// document except what the sink keeps. Errors are InvalidArgument with the byte offset in
// the whole (inflated) text and traceEvents[i], or the gzip reader's DataLoss, which wins
// over any error found in the text before the stream broke (the text may be garbage).
#ifndef OPMAP_ANALYSIS_IMPORT_KINETO_EVENT_STREAM_H_
#define OPMAP_ANALYSIS_IMPORT_KINETO_EVENT_STREAM_H_

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opmap::analysis {

class KinetoEventSink {
 public:
  virtual ~KinetoEventSink() = default;
  // One element of the events array, in document order. A simdjson error comes back as
  // "invalid JSON at byte N (in traceEvents[i])"; a non-OK *status stops the import as is.
  virtual simdjson::error_code OnEvent(simdjson::ondemand::object& event, size_t index,
                                       absl::Status* status) = 0;
  // The top-level "deviceProperties" value, parsed on its own (errors are the sink's).
  virtual void OnDeviceProperties(simdjson::ondemand::document& value) = 0;
};

struct KinetoStreamResult {
  bool saw_events = false;  // the root is an array or has a "traceEvents" array
  size_t events = 0;        // elements of the events array(s)
  uint64_t text_bytes = 0;  // size of the JSON text
};

// (bytes of text parsed, total bytes: for gzip, the trailer's size hint until the end).
using KinetoProgressFn = std::function<void(size_t, size_t)>;

// Spare capacity a plain text needs past its end to be parsed in place.
size_t KinetoStreamPadding();

// One event larger than this is an error (it would have to be held whole).
inline constexpr size_t kMaxKinetoEventBytes = size_t{64} << 20;

// Plain JSON in memory. The string grows by KinetoStreamPadding() bytes while it is
// parsed (no copy when its capacity allows) and bytes around batches of events are
// overwritten for a moment; it is as it was when this returns.
absl::StatusOr<KinetoStreamResult> StreamKinetoJson(std::string& json, KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress);

// Text in order from anywhere: an inflater, a file read a window at a time.
class KinetoTextSource {
 public:
  virtual ~KinetoTextSource() = default;
  // Up to `capacity` (> 0) bytes into `out`; fewer only at the end, after which done().
  virtual absl::StatusOr<size_t> Read(char* out, size_t capacity) = 0;
  virtual bool done() const = 0;
  // The text's size if known (for progress), else 0.
  virtual size_t size_hint() const = 0;
};

// A gzip stream (see GzipChunkReader), inflated on a thread of its own. `consumed`, when
// set, hears how many bytes of `compressed` have been read so far (about every MiB), so
// that a caller holding them in a mapping can let the read ones go.
absl::StatusOr<KinetoStreamResult> StreamKinetoGzip(std::string_view compressed,
                                                     KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress,
                                                     const std::function<void(size_t)>& consumed = {});

// Text from any source, held a window at a time (a few MiB plus the one unfinished event).
absl::StatusOr<KinetoStreamResult> StreamKinetoText(KinetoTextSource& source,
                                                     KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_KINETO_EVENT_STREAM_H_
