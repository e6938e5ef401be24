// The shared-memory ring between libopmap_inject.so (producer, inside the profiled
// process) and its reader (opmap-agent, or a test standing in for it). This header is the
// whole ABI: the library and the agent include it and nothing else of each other.
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
#ifndef OPMAP_AGENT_INJECT_RING_LAYOUT_H_
#define OPMAP_AGENT_INJECT_RING_LAYOUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace opmap::ring {

constexpr uint32_t kMagic = 0x524D504F;  // "OPMR" little-endian
constexpr uint32_t kVersion = 1;
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
  kRecordTypeCount = 13,
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

// NVTX payload kinds as recorded (NVTX's own enum values differ by version; these don't).
enum PayloadKind : uint8_t {
  kPayloadNone = 0,
  kPayloadUint64 = 1,
  kPayloadInt64 = 2,
  kPayloadDouble = 3,  // stored as its bit pattern in `payload`
  kPayloadUint32 = 4,
  kPayloadInt32 = 5,
  kPayloadFloat = 6,   // widened to double, bit pattern in `payload`
};

// kRange (push/pop), then name bytes.
struct RangeRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t domain_id;   // 0 = the default domain; else a kDomain record names it
  uint64_t payload;     // see payload_kind
  uint32_t tid;         // gettid() of the pushing thread
  uint32_t category;
  uint32_t color;       // ARGB, 0 = none
  uint16_t depth;       // 0 = outermost on its thread
  uint8_t payload_kind; // PayloadKind
  uint8_t reserved;
  uint16_t name_len;
  uint16_t reserved2;
  uint32_t reserved3;
};
static_assert(sizeof(RangeRecord) == 64);

// kRangeStart, then name bytes. `range_id` is what nvtxRangeStart returned.
struct RangeStartRecord {
  RecordHeader h;
  uint64_t range_id;
  int64_t start_ns;
  uint64_t domain_id;
  uint64_t payload;
  uint32_t tid;
  uint32_t category;
  uint32_t color;
  uint8_t payload_kind;
  uint8_t reserved;
  uint16_t name_len;
};
static_assert(sizeof(RangeStartRecord) == 56);

// kRangeEnd.
struct RangeEndRecord {
  RecordHeader h;
  uint64_t range_id;
  int64_t end_ns;
  uint64_t domain_id;
  uint32_t tid;
  uint32_t reserved;
};
static_assert(sizeof(RangeEndRecord) == 40);

// kDomain, then name bytes.
struct DomainRecord {
  RecordHeader h;
  uint64_t domain_id;
  uint16_t name_len;
  uint8_t reserved[6];
};
static_assert(sizeof(DomainRecord) == 24);

// kKernel, then the (mangled or demangled, as CUPTI gives it) kernel name.
struct KernelRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation_id;  // the launching API record's
  uint64_t graph_node_id;   // 0 = not launched from a graph
  uint32_t graph_id;        // 0 = not launched from a graph
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  int32_t grid_x, grid_y, grid_z;
  int32_t block_x, block_y, block_z;
  uint32_t static_shared_bytes;
  uint32_t dynamic_shared_bytes;
  uint32_t local_bytes_per_thread;
  uint16_t registers_per_thread;
  uint16_t name_len;
};
static_assert(sizeof(KernelRecord) == 96);

// kMemcpy.
struct MemcpyRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint64_t correlation_id;
  uint64_t graph_node_id;
  uint32_t graph_id;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint8_t copy_kind;  // CUpti_ActivityMemcpyKind
  uint8_t src_kind;   // CUpti_ActivityMemoryKind
  uint8_t dst_kind;
  uint8_t reserved[5];
};
static_assert(sizeof(MemcpyRecord) == 72);

// kMemset.
struct MemsetRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint64_t correlation_id;
  uint64_t graph_node_id;
  uint32_t graph_id;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t value;
  uint8_t memory_kind;
  uint8_t reserved[3];
};
static_assert(sizeof(MemsetRecord) == 72);

enum ApiDomain : uint8_t { kApiRuntime = 1, kApiDriver = 2 };

// kApi, then the function name (e.g. "cudaLaunchKernel").
struct ApiRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation_id;
  uint32_t cbid;      // CUPTI callback id within the domain
  uint32_t tid;       // CUPTI threadId (the OS thread id of the caller)
  uint32_t pid;
  uint8_t domain;     // ApiDomain
  uint8_t reserved;
  uint16_t name_len;
};
static_assert(sizeof(ApiRecord) == 48);

// kExternalCorrelation: the framework's id pushed around an API call.
struct ExternalCorrelationRecord {
  RecordHeader h;
  uint64_t external_id;
  uint64_t correlation_id;
  uint32_t external_kind;  // CUpti_ExternalCorrelationKind
  uint32_t reserved;
};
static_assert(sizeof(ExternalCorrelationRecord) == 32);

// kStall, then function name bytes, then reason name bytes.
struct StallRecord {
  RecordHeader h;
  uint64_t samples;
  uint32_t device_id;
  uint16_t function_len;
  uint16_t reason_len;
};
static_assert(sizeof(StallRecord) == 24);

// What a kStatus record is about.
enum Component : uint16_t { kComponentNvtx = 1, kComponentCupti = 2, kComponentPcSampling = 3 };
enum StatusCode : uint16_t { kStatusOk = 0, kStatusUnavailable = 1, kStatusError = 2 };

// kStatus, then the message bytes (for unavailable: the reason, without the prefix).
struct StatusRecord {
  RecordHeader h;
  int64_t time_ns;
  uint16_t component;  // Component
  uint16_t code;       // StatusCode
  uint16_t message_len;
  uint16_t reserved;
};
static_assert(sizeof(StatusRecord) == 24);

enum WindowMark : uint32_t { kWindowBegin = 1, kWindowEnd = 2 };

// kWindow: written by the library when a capture window begins and after its end (after
// the CUPTI flush), so the reader knows a window's records are all in.
struct WindowRecord {
  RecordHeader h;
  uint64_t window_id;
  int64_t time_ns;
  uint32_t mark;  // WindowMark
  uint32_t reserved;
};
static_assert(sizeof(WindowRecord) == 32);

constexpr uint32_t AlignRecord(uint32_t bytes) { return (bytes + 7u) & ~7u; }

// The fixed part of each record type (what a reader checks a size against); 0 = unknown.
constexpr uint32_t FixedSize(uint16_t type) {
  switch (type) {
    case kPadding: return sizeof(RecordHeader);
    case kRange: return sizeof(RangeRecord);
    case kRangeStart: return sizeof(RangeStartRecord);
    case kRangeEnd: return sizeof(RangeEndRecord);
    case kKernel: return sizeof(KernelRecord);
    case kMemcpy: return sizeof(MemcpyRecord);
    case kMemset: return sizeof(MemsetRecord);
    case kApi: return sizeof(ApiRecord);
    case kExternalCorrelation: return sizeof(ExternalCorrelationRecord);
    case kStall: return sizeof(StallRecord);
    case kStatus: return sizeof(StatusRecord);
    case kWindow: return sizeof(WindowRecord);
    case kDomain: return sizeof(DomainRecord);
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------
// Control socket (Unix stream socket, OPMAP_AGENT_SOCKET, default /run/opmap/agent.sock).
// Every message is a ControlHeader followed by `body_len` bytes. The library connects and
// sends kHello with the ring's memfd attached (SCM_RIGHTS); the agent checks the peer's
// credentials (SO_PEERCRED: root or the same uid) before it answers.

constexpr uint32_t kControlMagic = 0x434D504F;  // "OPMC"
constexpr uint32_t kMaxControlBody = 16 * 1024;
constexpr const char* kDefaultAgentSocket = "/run/opmap/agent.sock";

enum ControlType : uint16_t {
  kHello = 1,        // lib → agent: HelloBody + metadata text; memfd attached
  kWelcome = 2,      // agent → lib: accepted (no body)
  kStartWindow = 3,  // agent → lib: StartWindowBody
  kStopWindow = 4,   // agent → lib: StopWindowBody (end the window now)
  kWindowDone = 5,   // lib → agent: WindowDoneBody (after the kWindow end record)
  kDetach = 6,       // agent → lib: stop everything, finalize CUPTI, go dormant for good
  kStatusUpdate = 7, // lib → agent: StatusUpdateBody + message text
};

struct ControlHeader {
  uint32_t magic;  // kControlMagic
  uint16_t type;   // ControlType
  uint16_t reserved;
  uint32_t body_len;
  uint32_t reserved2;
};
static_assert(sizeof(ControlHeader) == 16);

// kHello body; then `metadata_len` bytes of "key=value\n" lines (model, model_revision,
// precision, framework, cuda_runtime, cupti, driver, cmdline, ... — unknown keys are kept).
struct HelloBody {
  uint32_t version;  // kVersion
  uint32_t pid;
  uint64_t ring_capacity;
  uint32_t capabilities;  // CaptureFlags the library can do in this process
  uint32_t metadata_len;
};
static_assert(sizeof(HelloBody) == 24);

enum CaptureFlags : uint32_t {
  kCaptureNvtx = 1,
  kCaptureCupti = 2,
  kCaptureStalls = 4,
};

struct StartWindowBody {
  uint64_t window_id;
  int64_t duration_ns;  // the library ends the window by itself after this long
  uint32_t flags;       // CaptureFlags
  uint32_t reserved;
};
static_assert(sizeof(StartWindowBody) == 24);

struct StopWindowBody {
  uint64_t window_id;
};
static_assert(sizeof(StopWindowBody) == 8);

struct WindowDoneBody {
  uint64_t window_id;
  int64_t begin_ns;
  int64_t end_ns;
  uint64_t records;  // records published during the window
  uint64_t drops;    // drops (all causes) during the window
};
static_assert(sizeof(WindowDoneBody) == 40);

struct StatusUpdateBody {
  uint16_t component;  // Component
  uint16_t code;       // StatusCode
  uint32_t message_len;
};
static_assert(sizeof(StatusUpdateBody) == 8);

}  // namespace opmap::ring

#endif  // OPMAP_AGENT_INJECT_RING_LAYOUT_H_
