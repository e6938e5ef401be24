// RingReader: the agent's side of the shared ring (abi/ring_protocol.h). Attaches
// to the memfd a library sent in its kHello, validates everything before using it, and
// drains committed records in ring order (ring_drain.h: copy out, zero, advance).
//
// Producers are never trusted: attach checks the magic, version, header size, capacity
// (a power of two in bounds, inside the mapping) and that the memfd is sealed against
// shrinking (so the producer cannot truncate it under our mapping and SIGBUS the agent);
// the drain checks every record's size and type. A record that fails a check poisons the
// reader: Drain returns DataLoss from then on, naming the position and the check.
//
//   ASSIGN_OR_RETURN(auto reader, RingReader::AttachFd(hello_fd));
//   ASSIGN_OR_RETURN(uint64_t n, reader->Drain([&](std::span<const uint8_t> rec) {
//     Handle(rec);  // bytes valid only during the call
//     return true;
//   }));
//
// Thread safety: one thread drains a reader at a time; Counters() may be called from any.
// Fuzzed by tests/fuzz/ring_reader_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_AGENT_TRANSPORT_RING_READER_H_
#define OPMAP_AGENT_TRANSPORT_RING_READER_H_

#include <cstdint>
#include <memory>
#include <span>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "abi/ring_protocol.h"
#include "common/base/saturating.h"

namespace opmap::transport {

struct RingCounters {
  uint64_t drops[ring::kDropCauseCount] = {};
  uint64_t records_committed = 0;
  uint64_t names_truncated = 0;
  uint64_t write_pos = 0;
  uint64_t read_pos = 0;
  uint64_t TotalDrops() const;
};

// How far a producer-written counter moved between two reads, believed only when it moved
// forward by at most kMaxCounterDelta (else 0): the producer is not trusted.
inline constexpr uint64_t kMaxCounterDelta = uint64_t{1} << 40;
inline int64_t CounterDelta(uint64_t after, uint64_t before) {
  return after >= before && after - before <= kMaxCounterDelta
             ? static_cast<int64_t>(after - before)
             : 0;
}
using base::SaturatingAdd;  // counts from the ring: common/base/saturating.h

class RingReader {
 public:
  // Takes ownership of `memfd` (closed on failure too) and maps it.
  static absl::StatusOr<std::unique_ptr<RingReader>> AttachFd(int memfd);
  // Over memory the caller owns and keeps mapped (tests, or a mapping made elsewhere).
  static absl::StatusOr<std::unique_ptr<RingReader>> AttachMemory(void* base, uint64_t bytes);

  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Hands each committed record (header included, `size` bytes, 8-aligned) to `fn`, which
  // returns false to stop before consuming it. Returns the records consumed.
  // Bounded: at most kMaxPassesPerDrain passes over the ring and `max_records` records,
  // however fast the producer writes.
  using RecordFn = absl::FunctionRef<bool(std::span<const uint8_t> record)>;
  static constexpr int kMaxPassesPerDrain = 2;
  absl::StatusOr<uint64_t> Drain(RecordFn fn, uint64_t max_records = ~uint64_t{0});

  RingCounters Counters() const;
  uint32_t pid() const { return pid_; }
  uint64_t capacity() const { return capacity_; }
  int64_t created_ns() const { return created_ns_; }
  // Records of types this reader does not know, skipped so far (a newer library).
  uint64_t unknown_records() const { return unknown_records_; }

 private:
  RingReader() = default;

  ring::RingHeader* header_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint32_t pid_ = 0;
  int64_t created_ns_ = 0;
  uint64_t unknown_records_ = 0;
  absl::Status poisoned_;
  // Set when AttachFd mapped the ring (unmapped and closed in the destructor).
  void* mapping_ = nullptr;
  uint64_t mapping_bytes_ = 0;
  int fd_ = -1;
};

}  // namespace opmap::transport

#endif  // OPMAP_AGENT_TRANSPORT_RING_READER_H_
