// The text of a Kineto trace file (gzip or plain JSON) as a KinetoTextSource, read a window
// at a time: a gzip file through a read-only mapping inflated on a thread of its own, whose
// read pages are let go as it goes (they stay in the page cache, not in this process); a
// plain file by read(). What `opmap analyze` and `opmap import` stream from.
#ifndef OPMAP_CLI_TRACE_FILE_TEXT_H_
#define OPMAP_CLI_TRACE_FILE_TEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/import/kineto_event_stream.h"

namespace opmap::cli {

// True when the file starts like a Kineto trace: gzip, or '{' / '[' after whitespace.
bool IsKinetoTraceFile(const std::string& path);

class TraceFileText {
 public:
  static absl::StatusOr<std::unique_ptr<TraceFileText>> Open(const std::string& path);
  virtual ~TraceFileText() = default;
  virtual analysis::KinetoTextSource& text() = 0;
};

}  // namespace opmap::cli

#endif  // OPMAP_CLI_TRACE_FILE_TEXT_H_
