// ActivityBuffers: the CUPTI activity buffers between CUPTI and the ring — bounded
// allocation, the completed-buffer queue, and the worker thread that decodes it.
//
//   CUPTI (any thread) ── Request ──▶ posix_memalign, at most max_buffers alive
//   CUPTI (its thread) ── Complete ─▶ queue (max_queued slots) ──▶ worker: decode → ring
//                                      └ full: records counted as kCuptiBufferQueue, freed
//
// Memory is bounded by max_buffers × buffer_bytes: beyond it Request hands CUPTI no buffer
// and CUPTI drops (and counts) records itself. Request and Complete never wait for the
// worker: the queue's lock is held only to push or pop one entry, never while decoding.
//
// Thread safety: Request/Complete/CountDrops from any thread; everything else from the
// control thread. Separate from CuptiCapture so the queue and the worker are tested
// without a GPU.
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_BUFFERS_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_BUFFERS_H_

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "agent/inject/cupti/cupti_api.h"
#include "agent/inject/cupti/cupti_decode.h"
#include "agent/inject/ring_writer.h"

namespace opmap::inject {

class ActivityBuffers {
 public:
  // `api` (its cuptiActivityGetNextRecord) outlives this object.
  explicit ActivityBuffers(const CuptiApi* api) : api_(api) {}
  ~ActivityBuffers() { StopWorker(); }
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  // Sizes for the next buffers: at least 64 KiB (a multiple of 8), at least 2 buffers,
  // a queue of 1..max_buffers slots. The queue is resized only while it is empty.
  void Configure(size_t buffer_bytes, size_t max_buffers, size_t max_queued);
  // Where decoded records and drop counts go (null: counted nowhere, decoded nowhere).
  void SetRing(ring::RingWriter* ring) { ring_.store(ring, std::memory_order_release); }
  ring::RingWriter* ring() const { return ring_.load(std::memory_order_acquire); }
  // The graph recorder's table, whose kGraphNode records the worker writes (may be null).
  void SetGraphTable(GraphNodeTable* table) {
    decode_.graphs.store(table, std::memory_order_release);
  }

  // CUPTI's buffer-requested callback: an 8-byte-aligned buffer, or null/0 at the bound.
  void Request(uint8_t** buffer, size_t* size);
  // CUPTI's buffer-completed callback (a buffer from Request; null or empty is fine).
  void Complete(uint8_t* buffer, size_t valid);
  void CountDrops(ring::DropCause cause, uint64_t n);

  // Starts the decode thread (all signals blocked in it). Idempotent.
  bool StartWorker(std::string* reason);
  // Waits until the queue is empty and the worker idle, at most `limit`; true if drained.
  bool WaitIdle(std::chrono::milliseconds limit);
  // Decodes whatever is queued, then joins the worker; later Completes free their buffer
  // and count its records as kCuptiBufferQueue. Idempotent.
  void StopWorker();

  size_t outstanding() const { return outstanding_.load(std::memory_order_relaxed); }
  size_t queued();
  // Totals of every buffer the worker decoded (read after WaitIdle/StopWorker).
  const DecodeStats& decoded() const { return decoded_; }

 private:
  struct Completed {
    uint8_t* buffer;
    size_t valid;
  };
  static void* WorkerMain(void* self);
  void Run();
  void Free(uint8_t* buffer);

  const CuptiApi* api_;
  std::atomic<ring::RingWriter*> ring_{nullptr};
  std::atomic<size_t> buffer_bytes_{4u << 20};
  std::atomic<size_t> max_buffers_{32};
  std::atomic<size_t> outstanding_{0};  // handed to CUPTI or queued, not yet freed

  std::mutex mu_;
  std::condition_variable work_cv_;  // worker: a buffer arrived, or quit
  std::condition_variable idle_cv_;  // WaitIdle: queue empty and worker idle
  std::vector<Completed> slots_ = std::vector<Completed>(16);  // guarded by mu_
  size_t head_ = 0;                                            // guarded by mu_
  size_t count_ = 0;                                           // guarded by mu_
  bool busy_ = false;                                          // guarded by mu_
  bool quit_ = false;                                          // guarded by mu_

  pthread_t worker_{};
  bool worker_running_ = false;  // control thread only
  DecodeContext decode_;         // worker only
  DecodeStats decoded_;          // worker only (read after it is idle)
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_BUFFERS_H_
