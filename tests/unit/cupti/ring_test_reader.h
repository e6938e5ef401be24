// A minimal ring reader for the CUPTI tests: walks the committed records of a ring that a
// test filled (single-threaded, nothing concurrent), following abi/ring_protocol.h,
// and copies each record out. Deliberately independent of agent/transport's reader so the
// decoder is checked against the layout header alone.
#ifndef OPMAP_TESTS_UNIT_CUPTI_RING_TEST_READER_H_
#define OPMAP_TESTS_UNIT_CUPTI_RING_TEST_READER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/inject/ring_writer.h"

namespace opmap::testing {

// A zeroed, initialized ring on the heap.
class HeapRing {
 public:
  explicit HeapRing(uint64_t capacity = 256 * 1024)
      : bytes_(ring::kHeaderBytes + capacity),
        base_(static_cast<uint8_t*>(std::aligned_alloc(64, bytes_))) {
    std::memset(base_, 0, bytes_);
    ring::InitRing(base_, capacity, 1234, 0);
    writer_ = ring::RingWriter(base_);
  }
  ~HeapRing() { std::free(base_); }
  HeapRing(const HeapRing&) = delete;
  HeapRing& operator=(const HeapRing&) = delete;

  ring::RingWriter* writer() { return &writer_; }
  ring::RingHeader* header() { return reinterpret_cast<ring::RingHeader*>(base_); }
  uint64_t drops(ring::DropCause c) { return header()->drops[c].load(); }

  struct Record {
    uint16_t type = 0;
    uint16_t flags = 0;
    std::vector<uint8_t> bytes;  // the whole record, header included

    template <typename T>
    T As() const {
      T t;
      std::memcpy(static_cast<void*>(&t), bytes.data(), sizeof(T));
      return t;
    }
    // `len` inline bytes at `offset` after the fixed part T.
    template <typename T>
    std::string Inline(uint32_t len, uint32_t offset = 0) const {
      return std::string(reinterpret_cast<const char*>(bytes.data()) + sizeof(T) + offset, len);
    }
  };

  // Every committed record between read_pos and write_pos, padding skipped; fails the
  // test on an uncommitted or malformed one.
  std::vector<Record> ReadAll() {
    std::vector<Record> out;
    ring::RingHeader* h = header();
    uint8_t* data = base_ + ring::kHeaderBytes;
    const uint64_t mask = h->capacity - 1;
    uint64_t pos = h->read_pos.load();
    const uint64_t end = h->write_pos.load();
    while (pos < end) {
      auto* rh = reinterpret_cast<ring::RecordHeader*>(data + (pos & mask));
      const uint32_t word = ring::LoadCommitted(rh);
      EXPECT_NE(word & ring::kCommitBit, 0u) << "uncommitted record at " << pos;
      const uint32_t size = word & ring::kSizeMask;
      EXPECT_EQ(size % 8, 0u);
      EXPECT_GE(size, sizeof(ring::RecordHeader));
      if ((word & ring::kCommitBit) == 0 || size == 0) break;
      if (rh->type != ring::kPadding) {
        EXPECT_GE(size, ring::FixedSize(rh->type)) << "type " << rh->type;
        Record r;
        r.type = rh->type;
        r.flags = rh->flags;
        r.bytes.assign(reinterpret_cast<uint8_t*>(rh), reinterpret_cast<uint8_t*>(rh) + size);
        out.push_back(std::move(r));
      }
      pos += size;
    }
    return out;
  }

 private:
  size_t bytes_;
  uint8_t* base_;
  ring::RingWriter writer_;
};

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_UNIT_CUPTI_RING_TEST_READER_H_
