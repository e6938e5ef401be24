#include "agent/inject/cupti/cupti_buffers.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace opmap::inject {
namespace {

constexpr size_t kMinBufferBytes = 64 * 1024;

void Add(DecodeStats* total, const DecodeStats& s) {
  total->records += s.records;
  total->kernels += s.kernels;
  total->memcpys += s.memcpys;
  total->memsets += s.memsets;
  total->apis += s.apis;
  total->external += s.external;
  total->skipped += s.skipped;
  total->bad += s.bad;
  total->ring_full += s.ring_full;
  total->graph_nodes += s.graph_nodes;
  total->graph_nodes_unknown += s.graph_nodes_unknown;
}

}  // namespace

void ActivityBuffers::Configure(size_t buffer_bytes, size_t max_buffers, size_t max_queued) {
  const size_t bytes = std::max(kMinBufferBytes, buffer_bytes) & ~size_t{7};
  const size_t buffers = std::max<size_t>(2, max_buffers);
  buffer_bytes_.store(bytes, std::memory_order_relaxed);
  max_buffers_.store(buffers, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  // A late buffer of the last window may still be queued: keep the slots until it is out.
  if (count_ == 0) {
    slots_.assign(std::clamp<size_t>(max_queued, 1, buffers), Completed{nullptr, 0});
    head_ = 0;
  }
}

void ActivityBuffers::Request(uint8_t** buffer, size_t* size) {
  *buffer = nullptr;
  *size = 0;
  // Beyond max_buffers CUPTI gets no buffer and drops records; it counts them, and
  // cuptiActivityGetNumDroppedRecords reports them (kCuptiDropped).
  const size_t limit = max_buffers_.load(std::memory_order_relaxed);
  if (outstanding_.fetch_add(1, std::memory_order_relaxed) >= limit) {
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  void* p = nullptr;
  const size_t bytes = buffer_bytes_.load(std::memory_order_relaxed);
  // CUPTI requires 8-byte alignment (ACTIVITY_RECORD_ALIGNMENT).
  if (posix_memalign(&p, 8, bytes) != 0 || p == nullptr) {
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  *buffer = static_cast<uint8_t*>(p);
  *size = bytes;
}

void ActivityBuffers::Complete(uint8_t* buffer, size_t valid) {
  if (buffer == nullptr) return;
  if (valid == 0) {
    Free(buffer);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!quit_ && count_ < slots_.size()) {
      slots_[(head_ + count_) % slots_.size()] = Completed{buffer, valid};
      ++count_;
      work_cv_.notify_one();
      return;
    }
  }
  // Queue full: the worker is behind (the ring is full, the machine overloaded) or gone.
  // Walking the buffer only to count its records is cheap next to decoding it.
  CountDrops(ring::kCuptiBufferQueue, CountActivityRecords(buffer, valid, *api_));
  Free(buffer);
}

void ActivityBuffers::CountDrops(ring::DropCause cause, uint64_t n) {
  ring::RingWriter* r = ring();
  if (r != nullptr && r->valid() && n > 0) {
    r->header()->drops[cause].fetch_add(n, std::memory_order_relaxed);
  }
}

void ActivityBuffers::Free(uint8_t* buffer) {
  std::free(buffer);
  outstanding_.fetch_sub(1, std::memory_order_relaxed);
}

size_t ActivityBuffers::queued() {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

bool ActivityBuffers::StartWorker(std::string* reason) {
  if (worker_running_) return true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = false;
  }
  // The worker must never take the application's signals (SIGINT, SIGPROF, ...): it
  // starts with all of them blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(&worker_, nullptr, &ActivityBuffers::WorkerMain, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    *reason = std::string("cannot start the CUPTI decode thread (") + std::strerror(rc) + ")";
    return false;
  }
  pthread_setname_np(worker_, "opmap-cupti");
  worker_running_ = true;
  return true;
}

bool ActivityBuffers::WaitIdle(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!worker_running_) return count_ == 0;
  return idle_cv_.wait_for(lock, limit, [this] { return count_ == 0 && !busy_; });
}

void ActivityBuffers::StopWorker() {
  if (!worker_running_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
    work_cv_.notify_all();
  }
  pthread_join(worker_, nullptr);  // it decodes what is queued first: bounded work
  worker_running_ = false;
}

void* ActivityBuffers::WorkerMain(void* self) {
  static_cast<ActivityBuffers*>(self)->Run();
  return nullptr;
}

void ActivityBuffers::Run() {
  while (true) {
    Completed c{};
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return count_ > 0 || quit_; });
      if (count_ == 0) {  // quit, and everything queued was decoded
        busy_ = false;
        idle_cv_.notify_all();
        return;
      }
      c = slots_[head_];
      head_ = (head_ + 1) % slots_.size();
      --count_;
      busy_ = true;
    }
    Add(&decoded_, DecodeActivityBuffer(c.buffer, c.valid, *api_, ring(), &decode_));
    Free(c.buffer);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      if (count_ == 0) idle_cv_.notify_all();
    }
  }
}

}  // namespace opmap::inject
