#include "agent/transport/ring_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "abi/ring_drain.h"

namespace opmap::transport {

uint64_t RingCounters::TotalDrops() const {
  uint64_t sum = 0;
  for (uint64_t d : drops) sum = d > UINT64_MAX - sum ? UINT64_MAX : sum + d;  // saturates
  return sum;
}

absl::StatusOr<std::unique_ptr<RingReader>> RingReader::AttachMemory(void* base,
                                                                     uint64_t bytes) {
  if (base == nullptr || bytes < ring::kHeaderBytes + ring::kMinCapacity) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring mapping of ", bytes, " bytes is smaller than the minimum ring (",
                     ring::kHeaderBytes + ring::kMinCapacity, " bytes)"));
  }
  const auto* h = static_cast<const ring::RingHeader*>(base);
  if (h->magic != ring::kMagic) {
    return absl::InvalidArgumentError(absl::StrCat("ring header: bad magic 0x",
                                                   absl::Hex(h->magic), " (want 0x",
                                                   absl::Hex(ring::kMagic), ")"));
  }
  if (h->version != ring::kVersion) {
    return absl::FailedPreconditionError(absl::StrCat("ring header: version ", h->version,
                                                      ", this reader speaks ", ring::kVersion));
  }
  if (h->header_bytes != ring::kHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring header: header_bytes ", h->header_bytes, " (want ", ring::kHeaderBytes,
                     ")"));
  }
  const uint64_t capacity = h->capacity;
  if (capacity < ring::kMinCapacity || capacity > ring::kMaxCapacity ||
      (capacity & (capacity - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ring header: capacity ", capacity, " is not a power of two in [", ring::kMinCapacity,
        ", ", ring::kMaxCapacity, "]"));
  }
  if (ring::kHeaderBytes + capacity > bytes) {
    return absl::InvalidArgumentError(absl::StrCat("ring header: capacity ", capacity,
                                                   " runs past the mapping (", bytes,
                                                   " bytes)"));
  }
  std::unique_ptr<RingReader> r(new RingReader());
  r->header_ = static_cast<ring::RingHeader*>(base);
  r->data_ = static_cast<uint8_t*>(base) + ring::kHeaderBytes;
  r->capacity_ = capacity;
  r->pid_ = h->pid;
  r->created_ns_ = h->created_ns;
  return r;
}

absl::StatusOr<std::unique_ptr<RingReader>> RingReader::AttachFd(int memfd) {
  // Seal first, then size, then map: once F_SEAL_SHRINK is set the size can only grow, so
  // the size read after it is a floor the mapping never outruns. Sizing first would let a
  // producer shrink and seal in between, leaving a mapping past EOF (SIGBUS on drain).
  const int seals = fcntl(memfd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    close(memfd);
    return absl::FailedPreconditionError(
        "ring fd is not a memfd sealed against shrinking (F_SEAL_SHRINK): refusing to map "
        "it, the producer could truncate it under the mapping");
  }
  struct stat st {};
  if (fstat(memfd, &st) != 0) {
    const int err = errno;
    close(memfd);
    return absl::InvalidArgumentError(absl::StrCat("ring fd: fstat: ", std::strerror(err)));
  }
  const auto bytes = static_cast<uint64_t>(st.st_size);
  if (bytes < ring::kHeaderBytes + ring::kMinCapacity ||
      bytes > ring::kHeaderBytes + ring::kMaxCapacity) {
    close(memfd);
    return absl::InvalidArgumentError(absl::StrCat("ring fd: size ", bytes, " out of range"));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(memfd);
    return absl::ResourceExhaustedError(absl::StrCat("ring fd: mmap: ", std::strerror(err)));
  }
  auto reader = AttachMemory(base, bytes);
  if (!reader.ok()) {
    munmap(base, bytes);
    close(memfd);
    return reader.status();
  }
  (*reader)->mapping_ = base;
  (*reader)->mapping_bytes_ = bytes;
  (*reader)->fd_ = memfd;
  return reader;
}

RingReader::~RingReader() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<uint64_t> RingReader::Drain(RecordFn fn, uint64_t max_records) {
  if (!poisoned_.ok()) return poisoned_;
  uint64_t total = 0;
  // At most two passes: the second picks up what the first saw wrap. A producer that
  // keeps writing must not keep the reader here (the supervisor thread drains every
  // ring); what it writes meanwhile waits for the next drain, or is dropped and counted
  // by the producer when the ring fills.
  for (int pass = 0; pass < kMaxPassesPerDrain && total < max_records; ++pass) {
    const ring::DrainResult r = ring::DrainRing(
        header_, data_, capacity_,
        [&](const ring::RecordHeader* h, uint32_t size) {
          return fn(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(h), size));
        },
        max_records - total);
    total += r.records;
    unknown_records_ += r.unknown_types;
    if (r.error != ring::DrainError::kNone) {
      poisoned_ = absl::DataLossError(absl::StrCat(
          "ring of pid ", pid_, ": ", ring::DrainErrorName(r.error), " at position ",
          r.error_pos, " (the producer is broken; this ring is no longer read)"));
      return poisoned_;
    }
    // One pass stops at the write position it saw first; stop when a pass found nothing.
    if (r.bytes == 0) break;
  }
  return total;
}

RingCounters RingReader::Counters() const {
  RingCounters c;
  for (uint32_t i = 0; i < ring::kDropCauseCount; ++i) {
    c.drops[i] = header_->drops[i].load(std::memory_order_relaxed);
  }
  c.records_committed = header_->records_committed.load(std::memory_order_relaxed);
  c.names_truncated = header_->names_truncated.load(std::memory_order_relaxed);
  c.write_pos = header_->write_pos.load(std::memory_order_relaxed);
  c.read_pos = header_->read_pos.load(std::memory_order_relaxed);
  return c;
}

}  // namespace opmap::transport
