#include "agent/inject/cupti/cupti_decode.h"

#include <cstring>

namespace opmap::inject {
namespace {

using ring::RingWriter;

// The struct each kind is decoded as. If a CUDA update renames them (Kernel11 in 13.1)
// this file stops compiling instead of misreading records.
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using MemsetActivity = CUpti_ActivityMemset4;
static_assert(sizeof(KernelActivity) == 216, "CUDA 13.0 kernel record (PLATFORM_NOTES)");

// Bytes of a NUL-terminated CUPTI string, looking at most one byte past what fits inline
// (a kernel name from CUPTI is trusted to be terminated, but not to be short).
std::string_view BoundedName(const char* s, bool* truncated) {
  if (s == nullptr) {
    *truncated = false;
    return {};
  }
  const size_t n = strnlen(s, ring::kMaxInlineName + 1);
  *truncated = n > ring::kMaxInlineName;
  return std::string_view(s, *truncated ? ring::kMaxInlineName : n);
}

uint32_t NonNegative(int32_t v) { return v < 0 ? 0u : static_cast<uint32_t>(v); }

// The node's entry goes into the ring ahead of its event, so a reader has it when the
// event arrives. A node the table lacks is counted; its event is written all the same.
void WriteGraphNode(uint64_t node_id, RingWriter* ring, DecodeContext* ctx,
                    DecodeStats* stats) {
  GraphNodeTable* table = ctx->graphs.load(std::memory_order_acquire);
  if (table == nullptr || node_id == 0) return;
  switch (table->EmitNode(node_id, ring)) {
    case GraphNodeTable::Emit::kWritten: ++stats->graph_nodes; break;
    case GraphNodeTable::Emit::kUnknown: ++stats->graph_nodes_unknown; break;
    case GraphNodeTable::Emit::kRingFull: ++stats->ring_full; break;
    case GraphNodeTable::Emit::kAlreadyWritten: break;
  }
}

void WriteKernel(const KernelActivity& k, RingWriter* ring, DecodeStats* stats) {
  bool truncated = false;
  const std::string_view name = BoundedName(k.name, &truncated);
  auto* r = ring->Reserve<ring::KernelRecord>(ring::kKernel, name.size());
  if (r == nullptr) {
    ++stats->ring_full;
    return;
  }
  r->start_ns = static_cast<int64_t>(k.start);
  r->end_ns = static_cast<int64_t>(k.end);
  r->correlation_id = k.correlationId;
  r->graph_node_id = k.graphNodeId;
  r->graph_id = k.graphId;
  r->device_id = k.deviceId;
  r->context_id = k.contextId;
  r->stream_id = k.streamId;
  r->grid_x = k.gridX;
  r->grid_y = k.gridY;
  r->grid_z = k.gridZ;
  r->block_x = k.blockX;
  r->block_y = k.blockY;
  r->block_z = k.blockZ;
  r->static_shared_bytes = NonNegative(k.staticSharedMemory);
  r->dynamic_shared_bytes = NonNegative(k.dynamicSharedMemory);
  r->local_bytes_per_thread = k.localMemoryPerThread;
  r->registers_per_thread = k.registersPerThread;
  r->name_len = static_cast<uint16_t>(name.size());
  RingWriter::CopyAfter(r, name);
  if (truncated) {
    r->h.flags |= ring::kFlagNameTruncated;
    ring->CountTruncated();
  }
  ring->Commit(&r->h, sizeof(*r) + name.size());
}

// MemcpyRecord and MemsetRecord share these fields, as CUPTI's memcpy and memset do.
template <typename Activity, typename Record>
void CopyMemoryFields(const Activity& m, Record* r) {
  r->start_ns = static_cast<int64_t>(m.start);
  r->end_ns = static_cast<int64_t>(m.end);
  r->bytes = m.bytes;
  r->correlation_id = m.correlationId;
  r->graph_node_id = m.graphNodeId;
  r->graph_id = m.graphId;
  r->device_id = m.deviceId;
  r->context_id = m.contextId;
  r->stream_id = m.streamId;
}

void WriteMemcpy(const MemcpyActivity& m, RingWriter* ring, DecodeStats* stats) {
  auto* r = ring->Reserve<ring::MemcpyRecord>(ring::kMemcpy, 0);
  if (r == nullptr) {
    ++stats->ring_full;
    return;
  }
  CopyMemoryFields(m, r);
  r->copy_kind = m.copyKind;
  r->src_kind = m.srcKind;
  r->dst_kind = m.dstKind;
  ring->Commit(&r->h, sizeof(*r));
}

void WriteMemset(const MemsetActivity& m, RingWriter* ring, DecodeStats* stats) {
  auto* r = ring->Reserve<ring::MemsetRecord>(ring::kMemset, 0);
  if (r == nullptr) {
    ++stats->ring_full;
    return;
  }
  CopyMemoryFields(m, r);
  r->value = m.value;
  // CUpti_ActivityMemoryKind fits a byte (its largest value is 8).
  r->memory_kind = static_cast<uint8_t>(m.memoryKind);
  ring->Commit(&r->h, sizeof(*r));
}

void WriteApi(const CUpti_ActivityAPI& a, ring::ApiDomain domain, const CuptiApi& api,
              RingWriter* ring, DecodeContext* ctx, DecodeStats* stats) {
  const std::string_view name = ctx->names.Name(
      api, domain == ring::kApiRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
      a.cbid);
  const uint16_t n = RingWriter::InlineLength(name);
  auto* r = ring->Reserve<ring::ApiRecord>(ring::kApi, n);
  if (r == nullptr) {
    ++stats->ring_full;
    return;
  }
  r->start_ns = static_cast<int64_t>(a.start);
  r->end_ns = static_cast<int64_t>(a.end);
  r->correlation_id = a.correlationId;
  r->cbid = a.cbid;
  r->tid = a.threadId;
  r->pid = a.processId;
  r->domain = domain;
  r->name_len = n;
  RingWriter::CopyAfter(r, name.substr(0, n));
  ring->Commit(&r->h, sizeof(*r) + n);
}

void WriteExternal(const CUpti_ActivityExternalCorrelation& e, RingWriter* ring,
                   DecodeStats* stats) {
  auto* r = ring->Reserve<ring::ExternalCorrelationRecord>(ring::kExternalCorrelation, 0);
  if (r == nullptr) {
    ++stats->ring_full;
    return;
  }
  r->external_id = e.externalId;
  r->correlation_id = e.correlationId;
  r->external_kind = static_cast<uint32_t>(e.externalKind);
  ring->Commit(&r->h, sizeof(*r));
}

}  // namespace

std::string_view StripVersionSuffix(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == name.size() || i < 2 || name[i - 1] != 'v' || name[i - 2] != '_') return name;
  return name.substr(0, i - 2);
}

std::string_view ApiNameCache::Name(const CuptiApi& api, CUpti_CallbackDomain domain,
                                    uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  const char* raw = nullptr;
  std::string name;
  // An unknown cbid (a newer driver than this CUPTI) stays nameless; the record keeps the
  // cbid, so nothing is lost. Bounded: the cbid space is a few thousand entries.
  if (api.cuptiGetCallbackName != nullptr &&
      api.cuptiGetCallbackName(domain, cbid, &raw) == CUPTI_SUCCESS && raw != nullptr) {
    name = std::string(StripVersionSuffix(std::string_view(raw, strnlen(raw, 256))));
  }
  return names_.emplace(key, std::move(name)).first->second;
}

DecodeStats DecodeActivityBuffer(uint8_t* buffer, size_t valid_size, const CuptiApi& api,
                                 RingWriter* ring, DecodeContext* ctx) {
  DecodeStats stats;
  if (buffer == nullptr || valid_size == 0) return stats;
  const bool have_ring = ring != nullptr && ring->valid();
  CUpti_Activity* record = nullptr;
  while (true) {
    const CUptiResult r = api.cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the normal end of the buffer
    if (r != CUPTI_SUCCESS || record == nullptr) {
      // CUPTI_ERROR_INVALID_KIND: an incomplete or corrupt record. Its size is unknown, so
      // the rest of the buffer cannot be walked; count it once and stop.
      ++stats.bad;
      if (have_ring) ring->CountDrop(ring::kBadRecord);
      break;
    }
    ++stats.records;
    // CUPTI hands out records inside the buffer (8-byte aligned, the kind's full struct);
    // a record that would end past valid_size is malformed.
    const auto* p = reinterpret_cast<const uint8_t*>(record);
    const size_t left = valid_size - static_cast<size_t>(p - buffer);
    auto fits = [&](size_t need) {
      if (p >= buffer && p < buffer + valid_size && need <= left) return true;
      ++stats.bad;
      if (have_ring) ring->CountDrop(ring::kBadRecord);
      return false;
    };
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        if (!fits(sizeof(KernelActivity))) break;
        ++stats.kernels;
        if (have_ring) {
          const auto& k = *reinterpret_cast<const KernelActivity*>(record);
          WriteGraphNode(k.graphNodeId, ring, ctx, &stats);
          WriteKernel(k, ring, &stats);
        }
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        if (!fits(sizeof(MemcpyActivity))) break;
        ++stats.memcpys;
        if (have_ring) {
          const auto& m = *reinterpret_cast<const MemcpyActivity*>(record);
          WriteGraphNode(m.graphNodeId, ring, ctx, &stats);
          WriteMemcpy(m, ring, &stats);
        }
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        if (!fits(sizeof(MemsetActivity))) break;
        ++stats.memsets;
        if (have_ring) {
          const auto& m = *reinterpret_cast<const MemsetActivity*>(record);
          WriteGraphNode(m.graphNodeId, ring, ctx, &stats);
          WriteMemset(m, ring, &stats);
        }
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        if (!fits(sizeof(CUpti_ActivityAPI))) break;
        ++stats.apis;
        if (have_ring) {
          WriteApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record),
                   record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ring::kApiRuntime
                                                               : ring::kApiDriver,
                   api, ring, ctx, &stats);
        }
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        if (!fits(sizeof(CUpti_ActivityExternalCorrelation))) break;
        ++stats.external;
        if (have_ring) {
          WriteExternal(*reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record),
                        ring, &stats);
        }
        break;
      default:
        // Overhead, device, context, ... records: CUPTI may emit them; opmap has no use.
        ++stats.skipped;
        break;
    }
  }
  return stats;
}

uint64_t CountActivityRecords(uint8_t* buffer, size_t valid_size, const CuptiApi& api) {
  if (buffer == nullptr || valid_size == 0) return 0;
  uint64_t n = 0;
  CUpti_Activity* record = nullptr;
  while (api.cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) ++n;
  // Bytes that do not walk (a malformed head record) still held at least one record.
  return n == 0 ? 1 : n;
}

}  // namespace opmap::inject
