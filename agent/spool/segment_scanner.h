// Recovery's reader of one segment file: finds every intact record and counts the bytes
// that are not one. A SIGKILL mid-append leaves a torn tail; a flipped bit anywhere
// fails that record's crc. Neither is fatal: the damaged region is skipped, counted, and
// scanning resumes at the next offset where a whole record (magic and crc) checks out,
// so one bad record never costs the intact ones after it.
#ifndef OPMAP_AGENT_SPOOL_SEGMENT_SCANNER_H_
#define OPMAP_AGENT_SPOOL_SEGMENT_SCANNER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opmap::agent {

struct ScannedRecord {
  uint64_t offset = 0;  // in the segment file
  uint64_t size = 0;    // whole record
  std::string session_id;
  uint64_t seq = 0;
  uint64_t payload_bytes = 0;
};

struct SegmentScan {
  std::vector<ScannedRecord> records;  // in file order
  uint64_t damaged_regions = 0;  // runs of bytes that held no intact record
  uint64_t damaged_bytes = 0;
};

SegmentScan ScanSegment(std::string_view bytes);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_SEGMENT_SCANNER_H_
