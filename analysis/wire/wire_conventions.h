// Model <-> wire value conventions, shared by TraceToBatches (batch_codec.cc) and
// SessionAssembler (session_assembler.cc) so that the two directions cannot drift apart.
// Internal to analysis/wire.
//
//   model (trace.h)                    wire (telemetry.proto)
//   kNone correlation / external_id /  0 ("none"). A model id of 0 also reads back as
//     graph_id / graph_node_id           kNone: CUPTI and Kineto mean "no id" by 0 too
//   process, thread (int64, kNone)     uint32, the int32 bit pattern: cast there, and back
//                                        through int32. Exact for every int32 value, so
//                                        kNone (-1 -> 0xFFFFFFFF), pid/tid 0 (a few
//                                        Kineto ranges have them) and the importer's
//                                        synthetic negative tids (-1000 - k) all survive;
//                                        TraceToBatches refuses values outside int32.
//                                        Real Linux pids/tids are < 2^22.
//   process of a launch / range        omitted (default Resource.pid) when every row of
//                                        the batch equals Resource.pid
//   GpuEvent.process                   Kernel/MemoryOpColumns.pid, sent only when some
//                                        event of the batch has one (Nsight exports of
//                                        several processes); absent: kNone, as the Kineto
//                                        importer leaves it
//   stream (int64)                     uint32, zero-extended back
//   device (int32)                     uint32 bit pattern, back through int32
//   grid / block {x,y,z}, 0 = unknown  grid_x..z / block_x..z (0 = unknown both sides)
//   registers_per_thread, -1 = unknown registers_per_thread, 0 = unknown
//   shared_memory_bytes, kNone         static_shared_memory_bytes (Kineto's "shared
//                                        memory" does not split static from dynamic);
//                                        the column is sent when any row knows it
//   memcpy / memset bytes, kNone       bytes (REQUIRED): kNone <-> 0, so a 0-byte copy
//                                        comes back as unknown size (never a made-up 0)
//   memcpy / memset name               name_id, and kind inferred from the name
//   Range.input_dims (StringId)        input_dims_id (0 = "" = none, both sides)
//   Range.payload, kNone               payload + 1 (0 = none)
//   RangeKind kNvtx                    RANGE_KIND_NVTX_PUSH_POP (START_END comes back kNvtx)
// An OPTIONAL column is sent only when some row of the batch has a value for it.
#ifndef OPMAP_ANALYSIS_WIRE_WIRE_CONVENTIONS_H_
#define OPMAP_ANALYSIS_WIRE_WIRE_CONVENTIONS_H_

#include <cstdint>
#include <string_view>

#include "analysis/model/trace.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::analysis::wire_internal {

inline uint64_t IdToWire(int64_t id) { return id == kNone ? 0 : static_cast<uint64_t>(id); }
// Ids ≥ 2^63 from a live agent come back negative; they stay distinct, which is all the
// mapping needs of them.
inline int64_t IdFromWire(uint64_t id) { return id == 0 ? kNone : static_cast<int64_t>(id); }

// Range.payload in [0, 2^63) or kNone <-> payload + 1, 0 = none (batch_validate refuses a
// wire value above 2^63).
inline uint64_t PayloadToWire(int64_t p) { return p < 0 ? 0 : static_cast<uint64_t>(p) + 1; }
inline int64_t PayloadFromWire(uint64_t p) {
  return p == 0 || p > (uint64_t{1} << 63) ? kNone : static_cast<int64_t>(p - 1);
}

inline uint32_t HostIdToWire(int64_t id) { return static_cast<uint32_t>(id); }
inline int64_t HostIdFromWire(uint32_t id) { return static_cast<int32_t>(id); }

inline uint32_t DeviceToWire(int32_t device) { return static_cast<uint32_t>(device); }
inline int32_t DeviceFromWire(uint32_t device) { return static_cast<int32_t>(device); }

inline uint32_t RegistersToWire(int32_t r) { return r < 0 ? 0 : static_cast<uint32_t>(r); }
inline int32_t RegistersFromWire(uint32_t r) { return r == 0 ? -1 : static_cast<int32_t>(r); }

inline uint64_t BytesToWire(int64_t b) { return b < 0 ? 0 : static_cast<uint64_t>(b); }
inline int64_t BytesFromWire(uint64_t b) { return b == 0 ? kNone : static_cast<int64_t>(b); }

// Memcpy direction from the name Kineto and CUPTI-based tools write, e.g.
// "Memcpy HtoD (Pageable -> Device)"; MEMCPY_OTHER when the name says none.
inline opmap::v1::MemoryOpKind MemoryOpKindFor(GpuEventKind kind, std::string_view name) {
  if (kind == GpuEventKind::kMemset) return opmap::v1::MEMORY_OP_KIND_MEMSET;
  if (name.find("HtoD") != std::string_view::npos) return opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOD;
  if (name.find("DtoH") != std::string_view::npos) return opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOH;
  if (name.find("DtoD") != std::string_view::npos) return opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOD;
  if (name.find("HtoH") != std::string_view::npos) return opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOH;
  if (name.find("PtoP") != std::string_view::npos) return opmap::v1::MEMORY_OP_KIND_MEMCPY_PTOP;
  return opmap::v1::MEMORY_OP_KIND_MEMCPY_OTHER;
}

// The name a memory op gets when its batch carries none (a live agent may send only the
// kind): what Kineto would have written, minus the memory types.
inline std::string_view DefaultMemoryOpName(opmap::v1::MemoryOpKind kind) {
  switch (kind) {
    case opmap::v1::MEMORY_OP_KIND_MEMSET: return "Memset";
    case opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOD: return "Memcpy HtoD";
    case opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOH: return "Memcpy DtoH";
    case opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOD: return "Memcpy DtoD";
    case opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOH: return "Memcpy HtoH";
    case opmap::v1::MEMORY_OP_KIND_MEMCPY_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

inline opmap::v1::RangeKind RangeKindToWire(RangeKind kind) {
  switch (kind) {
    case RangeKind::kCpuOp: return opmap::v1::RANGE_KIND_CPU_OP;
    case RangeKind::kUserAnnotation: return opmap::v1::RANGE_KIND_USER_ANNOTATION;
    case RangeKind::kNvtx: return opmap::v1::RANGE_KIND_NVTX_PUSH_POP;
    case RangeKind::kPythonFunction: return opmap::v1::RANGE_KIND_PYTHON_FUNCTION;
  }
  return opmap::v1::RANGE_KIND_UNSPECIFIED;
}

// An unspecified or unknown (newer) kind becomes kPythonFunction, the model's only
// non-operator kind: a range we cannot classify must not claim kernels from real
// operators, and proto/README.md says unknown enum values never fail a batch.
inline RangeKind RangeKindFromWire(int kind) {
  switch (kind) {
    case opmap::v1::RANGE_KIND_CPU_OP: return RangeKind::kCpuOp;
    case opmap::v1::RANGE_KIND_USER_ANNOTATION: return RangeKind::kUserAnnotation;
    case opmap::v1::RANGE_KIND_NVTX_PUSH_POP:
    case opmap::v1::RANGE_KIND_NVTX_START_END: return RangeKind::kNvtx;
    default: return RangeKind::kPythonFunction;
  }
}

inline opmap::v1::ApiKind ApiKindToWire(ApiKind kind) {
  return kind == ApiKind::kDriver ? opmap::v1::API_KIND_DRIVER : opmap::v1::API_KIND_RUNTIME;
}
// Unknown kinds count as runtime calls: the kind does not take part in mapping.
inline ApiKind ApiKindFromWire(int kind) {
  return kind == opmap::v1::API_KIND_DRIVER ? ApiKind::kDriver : ApiKind::kRuntime;
}

}  // namespace opmap::analysis::wire_internal

#endif  // OPMAP_ANALYSIS_WIRE_WIRE_CONVENTIONS_H_
