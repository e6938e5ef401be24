// The debug capture file that libopmap_inject.so writes with OPMAP_CAPTURE_FILE: its
// layout is agent/inject/capture_file_format.h (the library includes that header only);
// this is the reader, and a writer for tools that produce the same format.
//
//   FileHeader (64 B) | MetadataRecord | ring records as in the ring ... | TrailerRecord
//
// The reader trusts nothing in the file: every record size is checked against the bytes
// left and its type's fixed part, text lengths against their record, and the trailer must
// be last. A file that ends inside a record (the process died mid-write) is returned with
// `cut_short` set and the records before the cut.
#ifndef OPMAP_AGENT_CAPTURE_CAPTURE_FILE_H_
#define OPMAP_AGENT_CAPTURE_CAPTURE_FILE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/inject/capture_file_format.h"

namespace opmap::capture {

struct CaptureFile {
  capfile::FileHeader header{};
  std::string metadata;              // "key=value\n" lines
  std::vector<std::string> records;  // each ring record's bytes, in file order
  std::optional<capfile::TrailerRecord> trailer;  // absent: the capture was cut short
  bool cut_short = false;            // the file ended inside a record
};

absl::StatusOr<CaptureFile> ParseCaptureFile(std::string_view bytes);
absl::StatusOr<CaptureFile> ReadCaptureFile(const std::string& path);

// Writes the same format. Records are appended as given (already in ring form).
class CaptureFileWriter {
 public:
  static absl::StatusOr<CaptureFileWriter> Create(const std::string& path, uint32_t pid,
                                                  uint64_t ring_capacity,
                                                  std::string_view metadata);
  // The same on an open descriptor (a socket, a pipe), which the writer now owns.
  static absl::StatusOr<CaptureFileWriter> CreateOnFd(int fd, uint32_t pid,
                                                      uint64_t ring_capacity,
                                                      std::string_view metadata);
  CaptureFileWriter(CaptureFileWriter&&) noexcept;
  CaptureFileWriter& operator=(CaptureFileWriter&&) = delete;
  ~CaptureFileWriter();

  absl::Status Append(std::span<const uint8_t> record);
  // Writes the trailer and closes the file; `records_written` is filled in.
  absl::Status Finish(capfile::TrailerRecord trailer);

 private:
  explicit CaptureFileWriter(int fd) : fd_(fd) {}
  absl::Status Write(const void* bytes, size_t n);

  int fd_ = -1;
  uint64_t records_ = 0;
};

}  // namespace opmap::capture

#endif  // OPMAP_AGENT_CAPTURE_CAPTURE_FILE_H_
