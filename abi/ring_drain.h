// The reader side of the ring protocol (ring_protocol.h), in one place: the agent's
// RingReader (agent/transport/ring_reader.h) and the library's own debug-file mode both
// drain with DrainRing, so there is one implementation of "copy out, zero, advance".
//
// The reader trusts nothing the producer wrote: positions, every size and every type are
// checked before a byte is read, and a record that fails a check stops the drain with a
// DrainError (the ring is then unusable: a reader cannot resynchronise inside a lap
// written by a broken producer, so it must not guess).
//
// Header-only and free of anything but the abi/ headers because libopmap_inject.so includes
// it too.
//
// Thread safety: one reader per ring (it alone stores read_pos).
#ifndef OPMAP_ABI_RING_DRAIN_H_
#define OPMAP_ABI_RING_DRAIN_H_

#include <cstdint>
#include <cstring>

#include "abi/ring_records.h"

namespace opmap::ring {

enum class DrainError : uint8_t {
  kNone = 0,
  kBadPositions,   // read_pos > write_pos, or more than a lap between them
  kBadSize,        // size < 8, not a multiple of 8, past the lap's end or past write_pos
  kBadPadding,     // a kPadding record that does not end exactly at the end of the lap
  kShortRecord,    // size below the fixed part of its type
};

const char* DrainErrorName(DrainError e);

struct DrainResult {
  uint64_t records = 0;        // records handed to the callback
  uint64_t bytes = 0;          // bytes consumed (padding included)
  uint64_t unknown_types = 0;  // records of a type this reader does not know: skipped
  DrainError error = DrainError::kNone;
  uint64_t error_pos = 0;      // ring position of the record that failed a check
};

// Drains the committed records after read_pos, in ring order, stopping at the first one not
// yet committed (or after `max_records`). For each record, `on_record(const RecordHeader*,
// uint32_t size)` is called with the record's bytes in the ring (valid only during the
// call: they are zeroed right after); it returns false to stop before consuming that
// record (e.g. its output buffer is full). Padding is consumed silently.
// `data` is the ring's data area (kHeaderBytes past the header), `capacity` the validated
// capacity the reader mapped — never re-read from the shared header.
template <typename Fn>
DrainResult DrainRing(RingHeader* header, uint8_t* data, uint64_t capacity, Fn&& on_record,
                      uint64_t max_records = ~uint64_t{0}) {
  DrainResult r;
  const uint64_t mask = capacity - 1;
  uint64_t read = header->read_pos.load(std::memory_order_relaxed);
  const uint64_t write = header->write_pos.load(std::memory_order_acquire);
  // Records are 8-aligned, so positions are too: an unaligned one is a broken producer
  // (and would make the next header load misaligned).
  if (read > write || write - read > capacity || read % 8 != 0 || write % 8 != 0) {
    r.error = DrainError::kBadPositions;
    r.error_pos = read;
    return r;
  }
  // read_pos is published in batches: each store is a cache line the producers load on
  // every reservation, so storing it per record would make them pay for the reader.
  constexpr uint64_t kPublishEvery = 64 * 1024;
  uint64_t unpublished = 0;
  while (read < write && r.records < max_records) {
    const uint64_t off = read & mask;
    auto* h = reinterpret_cast<RecordHeader*>(data + off);
    const uint32_t word = LoadCommitted(h);
    if ((word & kCommitBit) == 0) break;  // a producer is mid-write; the rest waits
    const uint32_t size = word & kSizeMask;
    const uint64_t to_end = capacity - off;
    if (size < sizeof(RecordHeader) || size % 8 != 0 || size > to_end || size > write - read) {
      r.error = DrainError::kBadSize;
      r.error_pos = read;
      break;
    }
    const uint16_t type = h->type;
    if (type == kPadding) {
      if (size != to_end) {
        r.error = DrainError::kBadPadding;
        r.error_pos = read;
        break;
      }
    } else {
      const uint32_t fixed = FixedSize(type);
      if (fixed == 0) {
        ++r.unknown_types;  // its size checked out, so it can be stepped over safely
      } else if (size < fixed) {
        r.error = DrainError::kShortRecord;
        r.error_pos = read;
        break;
      } else {
        if (!on_record(static_cast<const RecordHeader*>(h), size)) break;
        ++r.records;
      }
    }
    // Zero the record so a producer's reserved space reads as "not committed" until its
    // own release store, whatever this lap left there (ring_protocol.h).
    std::memset(data + off + sizeof(uint32_t), 0, size - sizeof(uint32_t));
    ClearRecord(h);
    read += size;
    r.bytes += size;
    unpublished += size;
    if (unpublished >= kPublishEvery) {
      header->read_pos.store(read, std::memory_order_release);
      unpublished = 0;
    }
  }
  if (unpublished != 0) header->read_pos.store(read, std::memory_order_release);
  return r;
}

inline const char* DrainErrorName(DrainError e) {
  switch (e) {
    case DrainError::kNone: return "ok";
    case DrainError::kBadPositions: return "read/write positions out of range";
    case DrainError::kBadSize: return "record size out of range";
    case DrainError::kBadPadding: return "padding record does not end the lap";
    case DrainError::kShortRecord: return "record shorter than its type's fixed part";
  }
  return "unknown";
}

}  // namespace opmap::ring

#endif  // OPMAP_ABI_RING_DRAIN_H_
