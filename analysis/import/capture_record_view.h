// Typed, validated access to one record's bytes as drained from the ring (or read from a
// capture file). The fixed part is copied out (records are trivially copyable), and
// inline text is returned only when it lies inside the record: a producer's length field
// is never trusted.
#ifndef OPMAP_ANALYSIS_IMPORT_CAPTURE_RECORD_VIEW_H_
#define OPMAP_ANALYSIS_IMPORT_CAPTURE_RECORD_VIEW_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "abi/ring_records.h"

namespace opmap::analysis {

inline uint16_t RecordTypeOf(std::span<const uint8_t> record) {
  if (record.size() < sizeof(ring::RecordHeader)) return ring::kRecordTypeCount;
  ring::RecordHeader h;
  std::memcpy(&h, record.data(), sizeof(h));
  return h.type;
}

// The fixed part as T, or nullopt when the record is shorter than T.
template <typename T>
std::optional<T> FixedPart(std::span<const uint8_t> record) {
  if (record.size() < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, record.data(), sizeof(T));
  return v;
}

// `len` bytes at `offset` into the inline area after a fixed part of `fixed` bytes.
std::optional<std::string_view> InlineText(std::span<const uint8_t> record, size_t fixed,
                                           size_t offset, size_t len);

// The text a record carries (range / start / domain / kernel / API name, status message,
// stall function name), or nullopt when its length runs past the record; "" for record
// types without text.
std::optional<std::string_view> RecordName(std::span<const uint8_t> record);

// The stall reason of a kStall record (its second string).
std::optional<std::string_view> StallReason(std::span<const uint8_t> record);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CAPTURE_RECORD_VIEW_H_
