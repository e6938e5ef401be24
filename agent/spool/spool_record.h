// The on-disk record of the agent's spool (agent/spool/README.md). One record holds one
// serialized opmap.v1.Batch with the key the collector acks it by. Segment files are
// nothing but records back to back, append-only; all integers little-endian.
//
//   offset  size  field
//        0     4  magic        kRecordMagic ("OPSR")
//        4     4  body_len     bytes after this 12-byte header
//        8     4  crc          zlib crc32 of the 4 body_len bytes, then the body
//   body:
//       12     4  session_len  1..kMaxSessionIdBytes
//       16     n  session_id
//     16+n     8  seq          > 0
//     24+n     …  payload      the Batch bytes, as pushed
//
// The crc covers body_len too, so a flipped length byte is caught like any other; the
// magic lets the scanner find the next record after a damaged one. The reader trusts
// nothing: every length is checked against the bytes present before it is used.
#ifndef OPMAP_AGENT_SPOOL_SPOOL_RECORD_H_
#define OPMAP_AGENT_SPOOL_SPOOL_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace opmap::agent {

inline constexpr uint32_t kRecordMagic = 0x5253504F;  // bytes 'O' 'P' 'S' 'R'
inline constexpr uint64_t kRecordHeaderBytes = 12;
// session_len + seq: the body bytes that are not payload, besides the session id.
inline constexpr uint64_t kRecordKeyFixedBytes = 4 + 8;
inline constexpr uint64_t kMaxSessionIdBytes = 1024;
// body_len is a u32; keep well below it so header arithmetic never wraps.
inline constexpr uint64_t kMaxRecordBodyBytes = uint64_t{1} << 31;

// Bytes one record takes on disk.
constexpr uint64_t SpoolRecordSize(uint64_t session_bytes, uint64_t payload_bytes) {
  return kRecordHeaderBytes + kRecordKeyFixedBytes + session_bytes + payload_bytes;
}

// Header and key of a record, i.e. everything but the payload, so that the payload can be
// written straight from the caller's buffer (writev) without a copy.
std::string EncodeRecordPrefix(std::string_view session_id, uint64_t seq,
                               std::string_view payload);

enum class ParseOutcome {
  kOk,
  kTruncated,  // the bytes end inside the record (a torn tail write)
  kCorrupt,    // bad magic, impossible length or crc mismatch
};

struct ParsedRecord {
  ParseOutcome outcome = ParseOutcome::kCorrupt;
  uint64_t size = 0;  // whole record, header included (kOk only)
  std::string_view session_id;  // views into the parsed bytes
  uint64_t seq = 0;
  std::string_view payload;
};

// Parses the record that starts at `offset` in `bytes`.
ParsedRecord ParseRecordAt(std::string_view bytes, uint64_t offset);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_SPOOL_RECORD_H_
