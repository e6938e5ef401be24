// Capture files on disk: reading one from a path (the parser is
// analysis/import/capture_file_parser.h, which trusts nothing in the file) and writing the
// same format (abi/capture_file_format.h) for tools and the agent's attach answers.
#ifndef OPMAP_AGENT_TRANSPORT_CAPTURE_FILE_H_
#define OPMAP_AGENT_TRANSPORT_CAPTURE_FILE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "abi/capture_file_format.h"
#include "analysis/import/capture_file_parser.h"

namespace opmap::transport {

absl::StatusOr<analysis::CaptureFile> ReadCaptureFile(const std::string& path);

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

}  // namespace opmap::transport

#endif  // OPMAP_AGENT_TRANSPORT_CAPTURE_FILE_H_
