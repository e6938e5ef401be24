// The records libopmap_inject.so writes into the ring (abi/ring_protocol.h) and into
// capture files: a RecordHeader, a fixed part, then inline bytes (names), 8-byte aligned.
// Explicitly sized types only; every struct has a static_assert on its size, and a
// reader checks a record's size against FixedSize(type) before it looks inside.
#ifndef OPMAP_ABI_RING_RECORDS_H_
#define OPMAP_ABI_RING_RECORDS_H_

#include <cstdint>

#include "abi/ring_protocol.h"

namespace opmap::ring {

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
enum Component : uint16_t {
  kComponentNvtx = 1,
  kComponentCupti = 2,
  kComponentPcSampling = 3,
  kComponentGraphNodes = 4,  // the library's CUDA graph node table (kGraphNode records)
};
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

// kGraphNode: one CUDA graph node as the library recorded it when the node was created
// (CUPTI resource callbacks, usually at start-up, before any window): the NVTX push/pop
// ranges open on the creating thread at that moment, so the kernels a later window sees
// with this graph_node_id can be placed in the operator that captured them. Written by
// the CUPTI decoder before the first kernel, memcpy or memset of the node in each window
// (so every window, and every agent after a reconnect, gets it again), then `depth`
// GraphNodeLevel entries (outermost first), then their names back to back.
//
// Sequences number node creations in the process (1, 2, ...). A clone (graph
// instantiation) carries its original's sequence, ranges and graph. A level's
// [first, last] are the sequences of the first and last node created inside that range,
// so readers can lay the ranges out without seeing every node; graph_first/graph_last do
// the same for the original's graph.
struct GraphNodeRecord {
  RecordHeader h;
  uint64_t node_id;           // what kernels carry as graph_node_id: this node, or a clone
  uint64_t original_node_id;  // the node it was cloned from; 0 = created, not cloned
  uint64_t correlation_id;    // the API call that created the original node; 0 = unknown
  uint64_t sequence;          // the original node's creation sequence
  uint64_t graph_first;       // sequence of the first node created in its graph
  uint64_t graph_last;        // ... and of the last, when this record was written
  uint32_t graph_id;          // the graph the original node was created in (CUPTI's id)
  uint32_t tid;               // the thread that created it
  uint16_t depth;             // GraphNodeLevel entries that follow (≤ kMaxGraphNodeLevels)
  uint16_t reserved;
  uint32_t names_len;         // name bytes after the levels: the sum of their name_len
};
static_assert(sizeof(GraphNodeRecord) == 72);

// One open NVTX range of a kGraphNode record.
struct GraphNodeLevel {
  uint64_t range_key;  // the same push has the same key in every record of the process
  uint64_t first;      // sequence of the first node created inside the range
  uint64_t last;       // ... and of the last; 0 = the range was still open
  uint16_t name_len;
  uint16_t flags;      // RecordFlags: kFlagNameTruncated when the name was cut
  uint32_t reserved;
};
static_assert(sizeof(GraphNodeLevel) == 32);

// Readers refuse a kGraphNode deeper than this (the library's NVTX stack holds 64).
constexpr uint32_t kMaxGraphNodeLevels = 64;

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
    case kGraphNode: return sizeof(GraphNodeRecord);
    default: return 0;
  }
}

}  // namespace opmap::ring

#endif  // OPMAP_ABI_RING_RECORDS_H_
