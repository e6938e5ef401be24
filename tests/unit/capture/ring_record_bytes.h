// Ring records as the reader hands them over (fixed part, then the inline bytes), built by
// hand for the capture decoding tests.
#ifndef OPMAP_TESTS_UNIT_CAPTURE_RING_RECORD_BYTES_H_
#define OPMAP_TESTS_UNIT_CAPTURE_RING_RECORD_BYTES_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "abi/ring_protocol.h"
#include "abi/ring_records.h"

namespace opmap::analysis::test_records {

template <typename T>
std::string Record(ring::RecordType type, T fixed, std::string_view inline_bytes = {}) {
  fixed.h.type = type;
  const uint32_t size = ring::AlignRecord(sizeof(T) + inline_bytes.size());
  fixed.h.size_and_commit = size | ring::kCommitBit;
  std::string out(size, '\0');
  std::memcpy(out.data(), static_cast<const void*>(&fixed), sizeof(T));
  std::memcpy(out.data() + sizeof(T), inline_bytes.data(), inline_bytes.size());
  return out;
}

// A runtime API call record.
inline std::string Api(int64_t start, int64_t end, uint32_t tid, uint64_t correlation,
                       std::string_view name) {
  ring::ApiRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.tid = tid;
  r.correlation_id = correlation;
  r.domain = ring::kApiRuntime;
  r.name_len = static_cast<uint16_t>(name.size());
  return Record(ring::kApi, r, name);
}

}  // namespace opmap::analysis::test_records

#endif  // OPMAP_TESTS_UNIT_CAPTURE_RING_RECORD_BYTES_H_
