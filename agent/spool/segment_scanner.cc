#include "agent/spool/segment_scanner.h"

#include "agent/spool/spool_record.h"

namespace opmap::agent {
namespace {

// The first offset after `from` where an intact record starts, or bytes.size().
uint64_t Resync(std::string_view bytes, uint64_t from) {
  const char magic[4] = {static_cast<char>(kRecordMagic & 0xff),
                         static_cast<char>((kRecordMagic >> 8) & 0xff),
                         static_cast<char>((kRecordMagic >> 16) & 0xff),
                         static_cast<char>((kRecordMagic >> 24) & 0xff)};
  const std::string_view needle(magic, 4);
  for (uint64_t at = from + 1; at < bytes.size(); ++at) {
    at = bytes.find(needle, at);
    if (at == std::string_view::npos) break;
    // A magic inside a payload is not enough: the whole record must check out.
    if (ParseRecordAt(bytes, at).outcome == ParseOutcome::kOk) return at;
  }
  return bytes.size();
}

}  // namespace

SegmentScan ScanSegment(std::string_view bytes) {
  SegmentScan scan;
  uint64_t at = 0;
  while (at < bytes.size()) {
    ParsedRecord r = ParseRecordAt(bytes, at);
    if (r.outcome == ParseOutcome::kOk) {
      scan.records.push_back({at, r.size, std::string(r.session_id), r.seq, r.payload.size()});
      at += r.size;
      continue;
    }
    const uint64_t next = Resync(bytes, at);
    ++scan.damaged_regions;
    scan.damaged_bytes += next - at;
    at = next;
  }
  return scan;
}

}  // namespace opmap::agent
