// RFC 4180 records with the line each starts on, for importers of tool-written CSV
// (Nsight Compute). Quoted fields may hold commas, doubled quotes and newlines; CRLF and
// LF both end a record. Lines outside quotes that are blank or start with "==" (ncu's
// `==PROF==`, `==WARNING==`, `==ERROR==` chatter, which it interleaves with the CSV when
// both go to stdout) are skipped and counted. No I/O: the caller passes the bytes.
#ifndef OPMAP_ANALYSIS_IMPORT_CSV_RECORDS_H_
#define OPMAP_ANALYSIS_IMPORT_CSV_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

struct CsvRecord {
  int64_t line = 0;  // 1-based line of the file where the record starts
  std::vector<std::string> fields;
};

struct CsvRecords {
  std::vector<CsvRecord> records;
  int64_t skipped_tool_lines = 0;  // "==..." lines
};

// kInvalidArgument naming the line (and column) on an unterminated quoted field or a
// stray character after a closing quote.
absl::StatusOr<CsvRecords> ParseCsvRecords(std::string_view text);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CSV_RECORDS_H_
