// RingWriter: the producer side of abi/ring_protocol.h, for any number of threads at once.
// Lock-free and wait-free for the caller in the common case (one CAS; a retry only when
// another thread reserved at the same instant); never waits for the reader: when the ring
// is full the record is dropped and counted under the cause given.
//
//   RingWriter w(base);                       // base = mmap of the memfd
//   const uint16_t n = RingWriter::InlineLength(name);
//   if (auto* r = w.Reserve<KernelRecord>(kKernel, n)) {
//     r->start_ns = ...;
//     r->name_len = n;
//     RingWriter::CopyAfter(r, name.substr(0, n));   // bytes after the fixed part
//     w.Commit(&r->h, sizeof(*r) + n);               // the size given to Reserve
//   }
//
// One RingWriter may be shared by all threads (it holds no per-call state).
//
// Header-only because the injected library must not depend on anything else of ours.
#ifndef OPMAP_AGENT_INJECT_RING_WRITER_H_
#define OPMAP_AGENT_INJECT_RING_WRITER_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "abi/ring_records.h"

namespace opmap::ring {

class RingWriter {
 public:
  RingWriter() = default;
  // `base` points at a RingHeader followed by `capacity` data bytes (already initialized).
  explicit RingWriter(void* base)
      : header_(static_cast<RingHeader*>(base)),
        data_(static_cast<uint8_t*>(base) + kHeaderBytes),
        mask_(header_->capacity - 1) {}

  bool valid() const { return header_ != nullptr; }
  RingHeader* header() const { return header_; }

  // Space for a record of fixed part T plus `extra` inline bytes (names are cut to
  // kMaxInlineName in total by the caller). nullptr when the ring is full: the drop is
  // already counted under `cause`. The record's bytes are zero except the header's type.
  template <typename T>
  T* Reserve(RecordType type, uint32_t extra, DropCause cause = kRingFull) {
    return static_cast<T*>(ReserveBytes(type, sizeof(T) + extra, cause));
  }

  void* ReserveBytes(RecordType type, uint32_t bytes, DropCause cause) {
    const uint64_t size = AlignRecord(bytes);
    const uint64_t capacity = mask_ + 1;
    uint64_t pos = 0;
    uint64_t pad = 0;
    while (true) {
      // read_pos first, then write_pos: the reader only moves past records whose
      // reservation happened before, so a write_pos loaded afterwards is >= read. Loaded
      // the other way round, a thread preempted between the loads can see read > pos, and
      // the unsigned difference below would call a ring with room "full".
      const uint64_t read = header_->read_pos.load(std::memory_order_acquire);
      pos = header_->write_pos.load(std::memory_order_relaxed);
      const uint64_t to_end = capacity - (pos & mask_);
      pad = size <= to_end ? 0 : to_end;
      // A reader that corrupted read_pos (read > pos) reads as full: drop, never overrun.
      if (read > pos || pos + pad + size - read > capacity) {
        CountDrop(cause);
        return nullptr;
      }
      uint64_t expected = pos;
      if (header_->write_pos.compare_exchange_weak(expected, pos + pad + size,
                                                   std::memory_order_acq_rel,
                                                   std::memory_order_relaxed)) {
        break;
      }
    }
    if (pad != 0) {
      auto* padding = reinterpret_cast<RecordHeader*>(data_ + (pos & mask_));
      padding->type = kPadding;
      padding->flags = 0;
      PublishRecord(padding, static_cast<uint32_t>(pad));
      pos += pad;
    }
    auto* h = reinterpret_cast<RecordHeader*>(data_ + (pos & mask_));
    h->type = type;
    h->flags = 0;
    return h;
  }

  // Publishes a reserved record; `bytes` is what was passed to Reserve (fixed + extra).
  void Commit(RecordHeader* h, uint32_t bytes) {
    header_->records_committed.fetch_add(1, std::memory_order_relaxed);
    PublishRecord(h, AlignRecord(bytes));
  }

  void CountDrop(DropCause cause) {
    header_->drops[cause].fetch_add(1, std::memory_order_relaxed);
  }

  // Bytes of `name` that fit inline (a longer name is cut: set kFlagNameTruncated and
  // count it with CountTruncated).
  static uint16_t InlineLength(std::string_view name) {
    return static_cast<uint16_t>(name.size() < kMaxInlineName ? name.size() : kMaxInlineName);
  }

  void CountTruncated() { header_->names_truncated.fetch_add(1, std::memory_order_relaxed); }

  // Copies `bytes` right after the fixed part of `*record`, at `offset` bytes into the
  // inline area (for records with two strings, e.g. kStall).
  template <typename T>
  static void CopyAfter(T* record, std::string_view bytes, uint32_t offset = 0) {
    if (!bytes.empty()) {
      std::memcpy(reinterpret_cast<uint8_t*>(record) + sizeof(T) + offset, bytes.data(),
                  bytes.size());
    }
  }

 private:
  RingHeader* header_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t mask_ = 0;
};

// Initializes a fresh ring in `base` (kHeaderBytes + capacity bytes, zeroed, e.g. a new
// memfd's mapping).
inline void InitRing(void* base, uint64_t capacity, uint32_t pid, int64_t now_ns) {
  auto* h = static_cast<RingHeader*>(base);
  h->magic = kMagic;
  h->version = kVersion;
  h->header_bytes = kHeaderBytes;
  h->pid = pid;
  h->capacity = capacity;
  h->created_ns = now_ns;
}

}  // namespace opmap::ring

#endif  // OPMAP_AGENT_INJECT_RING_WRITER_H_
