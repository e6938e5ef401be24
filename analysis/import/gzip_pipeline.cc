#include "analysis/import/gzip_pipeline.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

namespace opmap::analysis {

PipelinedGzipReader::PipelinedGzipReader(std::string_view compressed,
                                         std::function<void(size_t)> consumed)
    : reader_(compressed), consumed_(std::move(consumed)), hint_(reader_.size_hint()) {
  thread_ = std::thread([this] { Inflate(); });
}

PipelinedGzipReader::~PipelinedGzipReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  room_.notify_all();
  thread_.join();
}

void PipelinedGzipReader::Inflate() {
  while (true) {
    Chunk chunk;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!spare_.empty()) {
        chunk.bytes = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (chunk.bytes == nullptr) chunk.bytes = std::make_unique_for_overwrite<char[]>(kChunkBytes);
    absl::StatusOr<size_t> n = reader_.Read(chunk.bytes.get(), kChunkBytes);
    if (consumed_) consumed_(reader_.total_in());
    std::unique_lock<std::mutex> lock(mu_);
    if (!n.ok()) {
      status_ = n.status();
      finished_ = true;
      ready_.notify_all();
      return;
    }
    chunk.size = *n;
    room_.wait(lock, [&] { return cancelled_ || queue_.size() < kQueueChunks; });
    if (cancelled_) return;
    if (chunk.size > 0) queue_.push_back(std::move(chunk));
    if (reader_.done()) finished_ = true;
    ready_.notify_all();
    if (finished_) return;
  }
}

absl::StatusOr<size_t> PipelinedGzipReader::Read(char* out, size_t capacity) {
  size_t copied = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (copied < capacity) {
    ready_.wait(lock, [&] { return !queue_.empty() || finished_; });
    if (queue_.empty()) {
      // The end, or an error after everything inflated before it was read.
      if (!status_.ok() && copied == 0) return status_;
      break;
    }
    Chunk& front = queue_.front();
    const size_t n = std::min(capacity - copied, front.size - front_offset_);
    std::memcpy(out + copied, front.bytes.get() + front_offset_, n);
    copied += n;
    front_offset_ += n;
    if (front_offset_ == front.size) {
      spare_.push_back(std::move(front.bytes));
      queue_.pop_front();
      front_offset_ = 0;
      room_.notify_one();
    }
  }
  return copied;
}

bool PipelinedGzipReader::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_ && status_.ok() && queue_.empty();
}

}  // namespace opmap::analysis
