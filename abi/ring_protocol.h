// The shared-memory ring between libopmap_inject.so (producer, inside the profiled
// process) and its reader (opmap-agent, or a test standing in for it). This header and its
// siblings in abi/ are the whole ABI: the library and the agent include them and nothing
// else of each other (ring_records.h: the record layouts; control_messages.h: the
// control socket; capture_file_format.h: the debug capture file).
// Use only explicitly sized types here; every struct has a static_assert on its size.
//
// Memory (one memfd, created by the library, handed to the agent over the control socket
// with SCM_RIGHTS):
//
//   0                 kHeaderBytes                                 kHeaderBytes+capacity
//   +-----------------+------------------------------------------------+
//   | RingHeader      | data: records, each 8-byte aligned             |
//   +-----------------+------------------------------------------------+
//
// Positions (write_pos, read_pos) are monotonically increasing byte counts; the offset in
// `data` is pos & (capacity - 1), capacity a power of two.
//
// Producers (any thread of the profiled process; many at once):
//   1. reserve `size` bytes with a CAS on write_pos, after checking that
//      write_pos + size - read_pos <= capacity. Full → count in drops[kRingFull] and
//      return: a producer never waits.
//      A record never wraps: when it does not fit before the end of `data`, the same CAS
//      also reserves the rest of the lap, which becomes a kPadding record.
//   2. write the record body (and the header's type/flags), then
//   3. publish with a release store of header.size_and_commit = size | kCommitBit.
//
// Reader (one): at read_pos, acquire-load size_and_commit; stop at the first record not
// yet committed (a producer is mid-write; records behind it wait). Validate the size
// (≥ sizeof(RecordHeader), multiple of 8, inside the lap, ≥ the type's fixed part) —
// the reader trusts nothing the producer wrote. Copy the record out, then zero the
// record's bytes, then release-store read_pos past it. Zeroing is what makes step 3 the
// only way a header becomes "committed": a producer's reserved space is all zeros until
// it publishes, whatever the previous lap left there.
//
// Strings (names) travel inline after a record's fixed part, not NUL-terminated, at most
// kMaxInlineName bytes; a longer name is cut and the record carries kFlagNameTruncated.
//
// Timestamps: int64 ns, CLOCK_REALTIME (CUPTI's default clock, and clock_gettime).
#ifndef OPMAP_ABI_RING_PROTOCOL_H_
#define OPMAP_ABI_RING_PROTOCOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace opmap::ring {

constexpr uint32_t kMagic = 0x524D504F;  // "OPMR" little-endian
// 2: kGraphNode records and the kGraphTableFull drop cause (graph capture, live).
constexpr uint32_t kVersion = 2;
constexpr uint32_t kHeaderBytes = 4096;
constexpr uint64_t kMinCapacity = 64 * 1024;
constexpr uint64_t kMaxCapacity = 1ull << 30;
constexpr uint64_t kDefaultCapacity = 8ull << 20;
constexpr uint32_t kMaxInlineName = 4096;
constexpr uint32_t kCommitBit = 0x80000000u;
constexpr uint32_t kSizeMask = 0x7FFFFFFFu;

// Why records were lost. Counted in RingHeader::drops; the agent reports every one.
enum DropCause : uint32_t {
  kRingFull = 0,          // no room in the ring: the reader is behind or gone
  kNestingTooDeep = 1,    // NVTX push beyond the per-thread stack depth; its pop is dropped too
  kUnmatchedPop = 2,      // NVTX pop with no push on this thread (pushed before capture began)
  kCuptiBufferQueue = 3,  // CUPTI buffer completed while the decode queue was full
  kCuptiDropped = 4,      // records CUPTI itself dropped (cuptiActivityGetNumDroppedRecords)
  kBadRecord = 5,         // CUPTI record the decoder did not understand
  kTooManyStrings = 6,    // registered NVTX strings/domains beyond the library's bound
  kGraphTableFull = 7,    // CUDA graph nodes or their NVTX ranges beyond the graph table's bound
  kDropCauseCount = 8,    // array size (room for later causes)
};

struct RingHeader {
  uint32_t magic;          // kMagic
  uint32_t version;        // kVersion
  uint32_t header_bytes;   // kHeaderBytes
  uint32_t pid;            // the producer's process
  uint64_t capacity;       // bytes of data, a power of two in [kMinCapacity, kMaxCapacity]
  int64_t created_ns;      // CLOCK_REALTIME when the ring was created
  uint8_t reserved0[32];
  alignas(64) std::atomic<uint64_t> write_pos;  // producers (CAS)
  alignas(64) std::atomic<uint64_t> read_pos;   // the reader
  alignas(64) std::atomic<uint64_t> drops[kDropCauseCount];
  std::atomic<uint64_t> records_committed;  // records published since creation
  std::atomic<uint64_t> names_truncated;    // records published with kFlagNameTruncated
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(RingHeader) == 320);
static_assert(sizeof(RingHeader) <= kHeaderBytes);

enum RecordType : uint16_t {
  kPadding = 0,         // skip: the rest of the lap
  kRange = 1,           // a complete NVTX push/pop range (written at the pop)
  kRangeStart = 2,      // NVTX start/end range: the start (the end may be on another thread)
  kRangeEnd = 3,        // ... and its end
  kKernel = 4,          // CUPTI CONCURRENT_KERNEL
  kMemcpy = 5,          // CUPTI MEMCPY
  kMemset = 6,          // CUPTI MEMSET
  kApi = 7,             // CUPTI RUNTIME or DRIVER API call
  kExternalCorrelation = 8,
  kStall = 9,           // PC-sampling: samples of one stall reason in one function
  kStatus = 10,         // a capture component's state, e.g. "unavailable: <reason>"
  kWindow = 11,         // capture window boundary marks
  kDomain = 12,         // NVTX domain id → name (written once per domain per window)
  kGraphNode = 13,      // a CUDA graph node and the NVTX ranges open when it was created
  kRecordTypeCount = 14,
};

enum RecordFlags : uint16_t {
  kFlagNameTruncated = 1,
};

// Plain integers so records are trivially copyable; size_and_commit is only ever accessed
// through std::atomic_ref<uint32_t> (PublishRecord / LoadCommitted below).
struct RecordHeader {
  uint32_t size_and_commit;  // total record bytes (8-aligned) | kCommitBit
  uint16_t type;                          // RecordType
  uint16_t flags;                         // RecordFlags
};
static_assert(sizeof(RecordHeader) == 8);
static_assert(std::atomic_ref<uint32_t>::required_alignment <= alignof(RecordHeader));

// The one release store that makes a record visible to the reader.
inline void PublishRecord(RecordHeader* h, uint32_t aligned_size) {
  std::atomic_ref<uint32_t>(h->size_and_commit)
      .store(aligned_size | kCommitBit, std::memory_order_release);
}
// The reader's acquire load of a header word (0 = nothing committed there yet).
inline uint32_t LoadCommitted(RecordHeader* h) {
  return std::atomic_ref<uint32_t>(h->size_and_commit).load(std::memory_order_acquire);
}
// The reader's reset of a consumed header (the rest of the record is zeroed with memset
// before read_pos moves past it).
inline void ClearRecord(RecordHeader* h) {
  std::atomic_ref<uint32_t>(h->size_and_commit).store(0, std::memory_order_relaxed);
}

constexpr uint32_t AlignRecord(uint32_t bytes) { return (bytes + 7u) & ~7u; }

}  // namespace opmap::ring

#endif  // OPMAP_ABI_RING_PROTOCOL_H_
