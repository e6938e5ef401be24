#include "agent/inject/file_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "agent/inject/bounded_lock.h"
#include "abi/capture_file_format.h"
#include "agent/inject/capture_state.h"
#include "agent/inject/metadata.h"
#include "abi/ring_drain.h"

namespace opmap::inject {
namespace {

constexpr int64_t kDrainEveryNs = 20'000'000;
constexpr size_t kFlushBytes = 256 * 1024;

}  // namespace

FileCapture::FileCapture(const InjectConfig& config, const RingMemory& ring,
                         WindowController* windows, FirstWindowLatch* latch,
                         const std::atomic<uint32_t>* loaded_by)
    : config_(config), ring_(ring), windows_(windows), latch_(latch), loaded_by_(loaded_by) {}

void FileCapture::Append(const void* bytes, size_t n) {
  buffer_.append(static_cast<const char*>(bytes), n);
  if (buffer_.size() >= kFlushBytes) Flush();
}

void FileCapture::Flush() {
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0 && !write_failed_) {
    const ssize_t n = write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_failed_ = true;  // disk full or gone: keep draining so the ring never stalls
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
}

bool FileCapture::Open() {
  fd_ = open(config_.capture_file.c_str(),
             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd_ < 0) return false;
  capfile::FileHeader h{};
  std::memcpy(h.magic, capfile::kMagic, sizeof(h.magic));
  h.version = capfile::kVersion;
  h.header_bytes = sizeof(h);
  h.pid = static_cast<uint32_t>(getpid());
  h.ring_version = ring::kVersion;
  h.created_ns = NowNs();
  h.ring_capacity = ring_.capacity;
  Append(&h, sizeof(h));
  const std::string text = BuildMetadata(config_, loaded_by_->load(std::memory_order_relaxed));
  capfile::MetadataRecord m{};
  const uint32_t size = ring::AlignRecord(static_cast<uint32_t>(sizeof(m) + text.size()));
  m.h.size_and_commit = size | ring::kCommitBit;
  m.h.type = capfile::kFileMetadata;
  m.text_len = static_cast<uint32_t>(text.size());
  Append(&m, sizeof(m));
  Append(text.data(), text.size());
  static const char kZeros[8] = {};
  Append(kZeros, size - sizeof(m) - text.size());
  return true;
}

void FileCapture::Drain() {
  auto* header = static_cast<ring::RingHeader*>(ring_.base);
  auto* data = static_cast<uint8_t*>(ring_.base) + ring::kHeaderBytes;
  while (true) {
    const ring::DrainResult r = ring::DrainRing(
        header, data, ring_.capacity, [this](const ring::RecordHeader* rec, uint32_t size) {
          if (write_failed_) {
            ++write_errors_;
          } else {
            Append(rec, size);
            ++records_written_;
          }
          return true;
        });
    // Our own producer can't corrupt the ring short of a bug; stop reading if it did.
    if (r.error != ring::DrainError::kNone || r.bytes == 0) return;
  }
}

void FileCapture::Finish() {
  if (done_) return;
  done_ = true;
  ring::WindowDoneBody done{};
  windows_->End(&done, 200'000'000);
  Drain();
  auto* header = static_cast<ring::RingHeader*>(ring_.base);
  capfile::TrailerRecord t{};
  t.h.size_and_commit = static_cast<uint32_t>(sizeof(t)) | ring::kCommitBit;
  t.h.type = capfile::kFileTrailer;
  t.closed_ns = NowNs();
  t.records_written = records_written_;
  t.records_committed = header->records_committed.load(std::memory_order_relaxed);
  t.names_truncated = header->names_truncated.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < ring::kDropCauseCount; ++i) {
    t.drops[i] = header->drops[i].load(std::memory_order_relaxed);
  }
  t.write_errors = write_errors_;
  Append(&t, sizeof(t));
  Flush();
  close(fd_);
  fd_ = -1;
}

bool FileCapture::StartLocked() {
  if (started_) return fd_ >= 0;
  started_ = true;
  if (!Open()) {
    done_ = true;
    latch_->Settle();
    return false;
  }
  uint32_t flags = ring::kCaptureNvtx | ring::kCaptureCupti;
  if (config_.stalls) flags |= ring::kCaptureStalls;
  windows_->Begin(1, config_.capture_seconds * 1'000'000'000, flags, nullptr, latch_);
  latch_->Settle();
  return true;
}

void FileCapture::Run() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!StartLocked()) return;
  }
  const int64_t deadline = NowNs() + config_.capture_seconds * 1'000'000'000;
  while (true) {
    timespec ts{0, kDrainEveryNs};
    nanosleep(&ts, nullptr);
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    Drain();
    if (NowNs() >= deadline) {
      Finish();
      return;
    }
  }
}

void FileCapture::AtExit() {
  if (!LockWithin(mu_, 500'000'000)) return;
  std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
  // A process that exits before our thread first ran still gets its (short) file.
  if (!StartLocked()) return;
  Finish();
}

}  // namespace opmap::inject
