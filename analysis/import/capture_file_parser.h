// The debug capture file libopmap_inject.so writes with OPMAP_CAPTURE_FILE, parsed from
// bytes (abi/capture_file_format.h has the layout; agent/transport/capture_file.h reads a
// path and writes the format):
//
//   FileHeader (64 B) | MetadataRecord | ring records as in the ring ... | TrailerRecord
//
// The parser trusts nothing in the file: every record size is checked against the bytes
// left and its type's fixed part, text lengths against their record, and the trailer must
// be last. A file that ends inside a record (the process died mid-write) is returned with
// `cut_short` set and the records before the cut.
// Fuzzed by tests/fuzz/capture_file_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_IMPORT_CAPTURE_FILE_PARSER_H_
#define OPMAP_ANALYSIS_IMPORT_CAPTURE_FILE_PARSER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "abi/capture_file_format.h"

namespace opmap::analysis {

struct CaptureFile {
  capfile::FileHeader header{};
  std::string metadata;              // "key=value\n" lines
  std::vector<std::string> records;  // each ring record's bytes, in file order
  std::optional<capfile::TrailerRecord> trailer;  // absent: the capture was cut short
  bool cut_short = false;            // the file ended inside a record
};

absl::StatusOr<CaptureFile> ParseCaptureFile(std::string_view bytes);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CAPTURE_FILE_PARSER_H_
