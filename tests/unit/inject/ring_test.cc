// The ring protocol (abi/ring_protocol.h) end to end in one process: RingWriter as
// the library uses it, RingReader as the agent uses it. Wrap-around with padding, full-ring
// drops, a reader that refuses corrupt headers and records, and many producers racing a
// concurrent reader (every record exactly once, in per-thread order).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analysis/import/capture_record_view.h"
#include "agent/transport/ring_reader.h"
#include "agent/inject/ring_writer.h"

namespace opmap::transport {
namespace {

using ring::RingWriter;

// A zeroed, page-aligned ring as the library creates it (header + data).
class Ring {
 public:
  explicit Ring(uint64_t capacity) : bytes_(ring::kHeaderBytes + capacity) {
    mem_ = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes_));
    std::memset(mem_, 0, bytes_);
    ring::InitRing(mem_, capacity, 42, 1);
    writer_ = RingWriter(mem_);
  }
  ~Ring() { std::free(mem_); }
  RingWriter& writer() { return writer_; }
  ring::RingHeader* header() { return reinterpret_cast<ring::RingHeader*>(mem_); }
  uint8_t* data() { return mem_ + ring::kHeaderBytes; }
  std::unique_ptr<RingReader> Reader() {
    auto r = RingReader::AttachMemory(mem_, bytes_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::move(*r) : nullptr;
  }
  uint8_t* mem() { return mem_; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_;
  uint8_t* mem_;
  RingWriter writer_;
};

// A kRange record named `name` with `payload`; false when the ring was full.
bool WriteRange(RingWriter& w, const std::string& name, uint64_t payload, uint32_t tid = 1) {
  const uint16_t n = RingWriter::InlineLength(name);
  auto* r = w.Reserve<ring::RangeRecord>(ring::kRange, n);
  if (r == nullptr) return false;
  r->payload = payload;
  r->tid = tid;
  r->name_len = n;
  RingWriter::CopyAfter(r, std::string_view(name).substr(0, n));
  w.Commit(&r->h, sizeof(*r) + n);
  return true;
}

struct Seen {
  std::string name;
  uint64_t payload;
  uint32_t tid;
};

std::vector<Seen> DrainAll(RingReader& reader) {
  std::vector<Seen> out;
  auto n = reader.Drain([&](std::span<const uint8_t> rec) {
    EXPECT_EQ(analysis::RecordTypeOf(rec), ring::kRange);
    const auto r = analysis::FixedPart<ring::RangeRecord>(rec);
    const auto name = analysis::RecordName(rec);
    EXPECT_TRUE(r && name);
    if (r && name) out.push_back({std::string(*name), r->payload, r->tid});
    return true;
  });
  EXPECT_TRUE(n.ok()) << n.status();
  return out;
}

TEST(RingTest, RecordsWrapAroundTheEndWithPadding) {
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  // 1000-byte names (1064-byte records) never divide the 64 KiB lap: every lap ends in
  // padding, and the reader must skip it and still see every record intact.
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 50; ++i) {
      const std::string name(1000, static_cast<char>('a' + written % 26));
      ASSERT_TRUE(WriteRange(ring.writer(), name, written)) << written;
      ++written;
    }
    for (const Seen& s : DrainAll(*reader)) {
      EXPECT_EQ(s.payload, read);
      EXPECT_EQ(s.name, std::string(1000, static_cast<char>('a' + read % 26)));
      ++read;
    }
  }
  EXPECT_EQ(read, written);
  const RingCounters c = reader->Counters();
  EXPECT_GT(c.write_pos, 30 * ring::kMinCapacity);  // many laps
  EXPECT_EQ(c.read_pos, c.write_pos);
  EXPECT_EQ(c.records_committed, written);
  EXPECT_EQ(c.TotalDrops(), 0u);
}

TEST(RingTest, FullRingDropsAndCountsThenRecovers) {
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  int ok = 0, dropped = 0;
  for (int i = 0; i < 2000; ++i) (WriteRange(ring.writer(), "x", i) ? ok : dropped)++;
  EXPECT_EQ(ok, static_cast<int>(ring::kMinCapacity / 72));  // 65-byte records take 72
  EXPECT_EQ(dropped, 2000 - ok);
  EXPECT_EQ(reader->Counters().drops[ring::kRingFull], static_cast<uint64_t>(dropped));
  ring.writer().Reserve<ring::RangeRecord>(ring::kRange, 0, ring::kNestingTooDeep);
  EXPECT_EQ(reader->Counters().drops[ring::kNestingTooDeep], 1u);  // counted under its cause
  EXPECT_EQ(DrainAll(*reader).size(), static_cast<size_t>(ok));
  EXPECT_TRUE(WriteRange(ring.writer(), "after", 1));
  EXPECT_EQ(DrainAll(*reader).size(), 1u);
}

TEST(RingTest, ReaderWaitsForARecordStillBeingWritten) {
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  auto* pending = ring.writer().Reserve<ring::RangeRecord>(ring::kRange, 0);
  ASSERT_NE(pending, nullptr);
  ASSERT_TRUE(WriteRange(ring.writer(), "behind", 1));
  EXPECT_TRUE(DrainAll(*reader).empty());  // blocked behind the uncommitted one
  ring.writer().Commit(&pending->h, sizeof(*pending));
  EXPECT_EQ(DrainAll(*reader).size(), 2u);
}

// A producer that writes as fast as the reader reads (here: one new record for each one
// consumed) must not keep Drain in its loop: it returns after its bounded passes, and the
// next call picks up the rest. Before, Drain looped until a pass found nothing and the
// agent's supervisor never ticked (issue: trust boundaries, finding 2).
TEST(RingTest, DrainReturnsWhileAProducerKeepsWriting) {
  Ring ring(1 << 16);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(WriteRange(ring.writer(), "r", i));
  auto reader = ring.Reader();
  uint64_t written = 100;
  auto n = reader->Drain([&](std::span<const uint8_t>) {
    if (WriteRange(ring.writer(), "r", written)) ++written;
    return true;
  });
  ASSERT_TRUE(n.ok()) << n.status();
  // Two passes: the 100 there at the start, then the 100 written during the first pass;
  // the unbounded loop took records until the ring filled (≈ 1,600 here).
  EXPECT_EQ(*n, 200u);
  EXPECT_EQ(written, 300u);  // the producer's newest 100 wait for the next drain
  // The record cap bounds a call too.
  auto m = reader->Drain([&](std::span<const uint8_t>) { return true; }, 7);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, 7u);
}

TEST(RingTest, AttachRejectsCorruptHeaders) {
  auto expect_rejected = [](auto corrupt, const char* what) {
    Ring ring(ring::kMinCapacity);
    corrupt(ring.header());
    auto r = RingReader::AttachMemory(ring.mem(), ring.bytes());
    EXPECT_FALSE(r.ok()) << what;
  };
  expect_rejected([](ring::RingHeader* h) { h->magic = 0x12345678; }, "magic");
  expect_rejected([](ring::RingHeader* h) { h->version = 99; }, "version");
  expect_rejected([](ring::RingHeader* h) { h->header_bytes = 64; }, "header_bytes");
  expect_rejected([](ring::RingHeader* h) { h->capacity = 3 * 65536; }, "not a power of two");
  expect_rejected([](ring::RingHeader* h) { h->capacity = 1 << 17; }, "past the mapping");
  expect_rejected([](ring::RingHeader* h) { h->capacity = 1024; }, "below the minimum");
  Ring ring(ring::kMinCapacity);
  EXPECT_FALSE(RingReader::AttachMemory(ring.mem(), 4096).ok()) << "mapping too small";
}

// Corrupts the first record's header word after it was committed; the reader must refuse
// it (DataLoss) and stay refused.
void ExpectCorruptRecordRejected(uint32_t size_word, uint16_t type, const char* what) {
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  ASSERT_TRUE(WriteRange(ring.writer(), "victim", 1));
  auto* h = reinterpret_cast<ring::RecordHeader*>(ring.data());
  h->size_and_commit = size_word | ring::kCommitBit;
  h->type = type;
  // Make write_pos cover whatever size we claimed, so only the size checks can catch it.
  ring.header()->write_pos.store(ring::kMinCapacity, std::memory_order_relaxed);
  auto n = reader->Drain([](std::span<const uint8_t>) { return true; });
  EXPECT_FALSE(n.ok()) << what;
  EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss) << what;
  EXPECT_FALSE(reader->Drain([](std::span<const uint8_t>) { return true; }).ok()) << what;
}

TEST(RingTest, DrainRejectsCorruptRecordSizes) {
  ExpectCorruptRecordRejected(4, ring::kRange, "smaller than a header");
  ExpectCorruptRecordRejected(68, ring::kRange, "not a multiple of 8");
  ExpectCorruptRecordRejected(16, ring::kRange, "shorter than RangeRecord");
  ExpectCorruptRecordRejected(ring::kMinCapacity + 8, ring::kRange, "past the lap");
  ExpectCorruptRecordRejected(64, ring::kPadding, "padding not ending the lap");
}

TEST(RingTest, DrainRejectsCorruptPositionsAndSkipsUnknownTypes) {
  {
    Ring ring(ring::kMinCapacity);
    auto reader = ring.Reader();
    ring.header()->read_pos.store(100, std::memory_order_relaxed);  // past write_pos
    EXPECT_FALSE(reader->Drain([](std::span<const uint8_t>) { return true; }).ok());
  }
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  auto* u = ring.writer().ReserveBytes(static_cast<ring::RecordType>(200), 24, ring::kRingFull);
  ring.writer().Commit(static_cast<ring::RecordHeader*>(u), 24);
  ASSERT_TRUE(WriteRange(ring.writer(), "known", 7));
  const auto seen = DrainAll(*reader);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].name, "known");
  EXPECT_EQ(reader->unknown_records(), 1u);
}

TEST(RingTest, InlineTextBeyondItsRecordIsRefused) {
  Ring ring(ring::kMinCapacity);
  auto reader = ring.Reader();
  auto* r = ring.writer().Reserve<ring::RangeRecord>(ring::kRange, 8);
  r->name_len = 200;  // claims more than the record holds
  ring.writer().Commit(&r->h, sizeof(*r) + 8);
  bool refused = false;
  ASSERT_TRUE(reader
                  ->Drain([&](std::span<const uint8_t> rec) {
                    refused = !analysis::RecordName(rec).has_value();
                    return true;
                  })
                  .ok());
  EXPECT_TRUE(refused);
}

// The reader trusts nothing: random garbage in the data area and positions must give
// either records or DataLoss, never a crash or a read outside the mapping (ASan builds).
TEST(RingTest, GarbageNeverCrashesTheReader) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    Ring ring(ring::kMinCapacity);
    uint64_t* words = reinterpret_cast<uint64_t*>(ring.data());
    for (uint64_t i = 0; i < ring::kMinCapacity / 8; ++i) {
      words[i] = (rng() % 4 == 0) ? rng() : (rng() & 0x800000FF000000F8ull);
    }
    const uint64_t read = rng() % (4 * ring::kMinCapacity);
    ring.header()->read_pos.store(read, std::memory_order_relaxed);
    ring.header()->write_pos.store(read + rng() % (ring::kMinCapacity + 16),
                                   std::memory_order_relaxed);
    auto reader = ring.Reader();
    uint64_t bytes = 0;
    auto n = reader->Drain([&](std::span<const uint8_t> rec) {
      bytes += rec.size();
      (void)analysis::RecordName(rec);
      (void)analysis::StallReason(rec);
      return true;
    });
    if (n.ok()) {
      EXPECT_LE(bytes, ring::kMinCapacity);
    }
  }
}

TEST(RingTest, ManyProducersAndAConcurrentReaderSeeEveryRecordOnceInOrder) {
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 200'000;
  Ring ring(1 << 20);
  auto reader = ring.Reader();
  std::atomic<int> producing{kThreads};
  std::vector<uint64_t> retries(kThreads, 0);
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) {
        // Variable sizes so reservations straddle the lap end at every offset. The writer
        // never waits; this test's producer retries so that every record gets in.
        const std::string name(i % 97, static_cast<char>('A' + t));
        while (!WriteRange(ring.writer(), name, i, t + 1)) {
          ++retries[t];
          std::this_thread::yield();
        }
      }
      producing.fetch_sub(1);
    });
  }
  std::vector<uint64_t> next(kThreads + 1, 0);
  uint64_t total = 0;
  bool ok = true;
  auto consume = [&](std::span<const uint8_t> rec) {
    const auto r = analysis::FixedPart<ring::RangeRecord>(rec);
    const auto name = analysis::RecordName(rec);
    if (!r || !name || r->tid < 1 || r->tid > kThreads || r->payload != next[r->tid] ||
        name->size() != r->payload % 97 ||
        (!name->empty() && (*name)[0] != static_cast<char>('A' + r->tid - 1))) {
      ok = false;
    } else {
      ++next[r->tid];
    }
    ++total;
    return true;
  };
  while (producing.load() > 0) {
    auto n = reader->Drain(consume);
    ASSERT_TRUE(n.ok()) << n.status();
    if (*n == 0) std::this_thread::yield();
  }
  for (auto& p : producers) p.join();
  ASSERT_TRUE(reader->Drain(consume).ok());
  EXPECT_TRUE(ok) << "a record arrived twice, out of order or corrupted";
  EXPECT_EQ(total, kThreads * kPerThread);
  for (int t = 1; t <= kThreads; ++t) EXPECT_EQ(next[t], kPerThread);
  const RingCounters c = reader->Counters();
  EXPECT_EQ(c.records_committed, total);
  uint64_t all_retries = 0;
  for (uint64_t r : retries) all_retries += r;
  EXPECT_EQ(c.drops[ring::kRingFull], all_retries);  // each failed attempt counted once
  EXPECT_EQ(c.read_pos, c.write_pos);
}

}  // namespace
}  // namespace opmap::transport
