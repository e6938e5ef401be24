// libFuzzer target for the agent's side of the shared ring (abi/ring_protocol.h):
// a memfd, sealed against shrinking like the library's, is filled from the input —
// RingHeader fields and data area alike — then RingReader::AttachFd (or AttachMemory)
// and Drain hand the records to the record views (record_view.h) and to
// CaptureTraceBuilder, and the window is encoded into Batches as the agent does
// (FinishCaptureTrace -> TraceToBatches), which the collector's SessionAssembler must
// accept: what the agent sends from any ring, the collector takes.
//
// Input: flags (1 byte), then up to sizeof(RingHeader) bytes copied over the header,
// then the data area's bytes, laid down from read_pos's offset on and wrapping at the
// ring's end, as a producer would have written them.
//   flags bit 0  set magic, version and header_bytes to the valid values
//         bit 1  set capacity to 64 KiB (bit 2: 128 KiB) instead of the input's
//         bit 3  set write_pos = read_pos + the data bytes given
//         bits 4-5  the first Drain's max_records: all, 1, 7, 64
//         bit 6  the first Drain's callback stops before its 5th record
//         bit 7  AttachMemory on the mapping instead of AttachFd on the memfd
//
// Invariants: every record handed out is 8-aligned in size, at least its type's fixed
// part, of a known type, and its text views lie inside it; a reader that failed once
// fails the same way after (poisoned); the batches encoded from it validate.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/import/capture_import.h"
#include "analysis/import/capture_trace.h"
#include "analysis/import/capture_record_view.h"
#include "agent/transport/ring_reader.h"
#include "abi/ring_records.h"
#include "analysis/wire/batch_codec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;
using fuzz::Fail;

constexpr uint64_t kMaxRing = 128 * 1024;
constexpr uint64_t kMapBytes = ring::kHeaderBytes + kMaxRing;

struct Region {
  int fd = -1;
  uint8_t* base = nullptr;
};

// One memfd for the process, sealed like the library's (F_SEAL_SHRINK, and grow too so
// its size never changes); each input rewrites it.
const Region& SharedRegion() {
  static const Region region = [] {
    Region r;
    r.fd = memfd_create("opmap-fuzz-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (r.fd < 0 || ftruncate(r.fd, kMapBytes) != 0 ||
        fcntl(r.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
      Fail("memfd setup");
    }
    void* p = mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
    if (p == MAP_FAILED) Fail("mmap of the ring memfd");
    r.base = static_cast<uint8_t*>(p);
    return r;
  }();
  return region;
}

void CheckRecord(std::span<const uint8_t> rec) {
  Check(rec.size() >= sizeof(ring::RecordHeader) && rec.size() % 8 == 0, "record size");
  const uint16_t type = analysis::RecordTypeOf(rec);
  const uint32_t fixed = ring::FixedSize(type);
  Check(type != ring::kPadding && fixed != 0, "only known, non-padding records are handed out");
  Check(rec.size() >= fixed, "record at least its fixed part");
  auto inside = [&](std::string_view s) {
    const auto* b = reinterpret_cast<const char*>(rec.data());
    return s.empty() || (s.data() >= b && s.data() + s.size() <= b + rec.size());
  };
  if (std::optional<std::string_view> name = analysis::RecordName(rec)) {
    Check(inside(*name), "RecordName inside its record");
  }
  if (std::optional<std::string_view> reason = analysis::StallReason(rec)) {
    Check(inside(*reason), "StallReason inside its record");
  }
}

// The agent's conversion of a window (agent/daemon/window_batches.cc) and the
// collector's acceptance of what it sends.
void EncodeAndAssemble(const std::vector<std::string>& records, uint32_t pid) {
  analysis::CaptureTraceBuilder builder(pid);
  for (const std::string& r : records) builder.Add(r);
  analysis::Trace trace = analysis::FinishCaptureTrace(std::move(builder).Finish());
  analysis::BatchingOptions options;
  options.agent_id = "fuzz-agent";
  options.session_id = "fuzz-session";
  options.resource.set_pid(pid);
  options.max_records_per_batch = 16;
  absl::StatusOr<std::vector<v1::Batch>> batches = analysis::TraceToBatches(trace, options);
  if (!batches.ok()) {
    fuzz::CheckErrorSaysWhy(batches.status(), "TraceToBatches");
    return;
  }
  analysis::SessionAssembler assembler;
  for (const v1::Batch& b : *batches) {
    std::string field;
    absl::Status st = assembler.Append(b, analysis::BatchLimits{}, &field);
    if (!st.ok() && !fuzz::KnownOpen("agent-batch-rejected")) {
      Fail("the collector rejects a batch the agent encoded", st.ToString());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Region& region = SharedRegion();
  std::memset(region.base, 0, kMapBytes);
  fuzz::Reader in(data, size);
  const uint8_t flags = in.U8();
  const std::string_view head = in.Bytes(sizeof(ring::RingHeader));
  std::memcpy(region.base, head.data(), head.size());
  auto* h = reinterpret_cast<ring::RingHeader*>(region.base);
  if (flags & 0x01) {
    h->magic = ring::kMagic;
    h->version = ring::kVersion;
    h->header_bytes = ring::kHeaderBytes;
  }
  if (flags & 0x02) h->capacity = (flags & 0x04) ? kMaxRing : ring::kMinCapacity;
  // Lay the data down as the producer would have: from read_pos's offset, wrapping.
  const uint64_t lap = (h->capacity == ring::kMinCapacity) ? ring::kMinCapacity : kMaxRing;
  const std::string_view body = in.Bytes(lap);
  if (fuzz::KnownOpen("ring-read-pos-alignment")) {
    h->read_pos.store(h->read_pos.load(std::memory_order_relaxed) & ~uint64_t{7});
  }
  const uint64_t read = h->read_pos.load(std::memory_order_relaxed);
  uint8_t* ring_data = region.base + ring::kHeaderBytes;
  const uint64_t off = read & (lap - 1);
  const size_t first = std::min<uint64_t>(body.size(), lap - off);
  std::memcpy(ring_data + off, body.data(), first);
  std::memcpy(ring_data, body.data() + first, body.size() - first);
  if (flags & 0x08) h->write_pos.store(read + body.size(), std::memory_order_relaxed);

  absl::StatusOr<std::unique_ptr<transport::RingReader>> reader =
      (flags & 0x80) ? transport::RingReader::AttachMemory(region.base, kMapBytes)
                     : transport::RingReader::AttachFd(dup(region.fd));
  if (!reader.ok()) {
    fuzz::CheckErrorSaysWhy(reader.status(), "RingReader attach");
    return 0;
  }
  std::vector<std::string> records;
  const uint64_t limits[] = {~uint64_t{0}, 1, 7, 64};
  const uint64_t first_limit = limits[(flags >> 4) & 3];
  size_t seen = 0;
  auto keep = [&](std::span<const uint8_t> rec) {
    if ((flags & 0x40) && seen == 4) return false;
    ++seen;
    CheckRecord(rec);
    records.emplace_back(reinterpret_cast<const char*>(rec.data()), rec.size());
    return true;
  };
  absl::StatusOr<uint64_t> n1 = (*reader)->Drain(keep, first_limit);
  if (n1.ok()) Check(*n1 <= first_limit && *n1 == records.size(), "Drain's count");
  seen = 0;
  const size_t before = records.size();
  absl::StatusOr<uint64_t> n2 =
      (*reader)->Drain([&](std::span<const uint8_t> rec) {
        CheckRecord(rec);
        records.emplace_back(reinterpret_cast<const char*>(rec.data()), rec.size());
        return true;
      });
  if (!n1.ok()) {
    fuzz::CheckErrorSaysWhy(n1.status(), "Drain");
    Check(!n2.ok() && n2.status() == n1.status(), "a poisoned reader stays poisoned");
  }
  if (n2.ok()) Check(*n2 == records.size() - before, "Drain's count (second)");
  Check(records.size() * sizeof(ring::RecordHeader) <= body.size(),
        "no more records than the data holds");
  (void)(*reader)->Counters().TotalDrops();
  EncodeAndAssemble(records, (*reader)->pid());
  return 0;
}
