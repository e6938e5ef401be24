// CuptiCapture: CUPTI activity capture for libopmap_inject.so — kernels, memcpy/memset,
// runtime/driver launch calls, external correlation, graph ids, and (optionally) PC
// sampling stall reasons — decoded into the shared ring (abi/ring_records.h).
//
// libcupti and the driver are dlopened: the library loads and the host process runs on a
// machine without a GPU or without CUPTI; Start then fails with the reason and nothing
// else happens. CUPTI buffers are handed by CUPTI's callback to one worker thread that
// decodes them into the ring; when that queue is full a buffer is dropped and its records
// counted (kCuptiBufferQueue). Never throws; never blocks the application's threads.
//
// Thread safety: Start/Stop/Finalize are called from the library's control thread
// only (one at a time).
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_CAPTURE_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_CAPTURE_H_

#include <string>

#include "agent/inject/ring_writer.h"

namespace opmap::inject {

struct CuptiOptions {
  bool stalls = false;               // PC sampling (stall reasons per function name)
  size_t buffer_bytes = 4u << 20;    // one CUPTI activity buffer (Kineto uses 4 MiB)
  size_t max_buffers = 32;           // buffers in flight or queued before drops begin
  // Completed buffers waiting for the decode worker (at most max_buffers); one more is
  // dropped undecoded and its records counted as kCuptiBufferQueue.
  size_t max_queued_buffers = 16;
  uint32_t pc_sampling_period_log2 = 12;          // 2^12 cycles (CUPTI allows 5..31)
  size_t pc_sampling_hw_buffer_bytes = 32u << 20;  // GPU memory; CUPTI's default is 512 MiB
  // Out, optional: when `stalls` was asked for and PC sampling can't run, Start still
  // succeeds (activity capture runs) and sets this to the reason; the caller reports
  // "PC sampling unavailable: <reason>" (kComponentPcSampling). Cleared when it runs.
  std::string* stalls_reason = nullptr;
};

class CuptiCapture {
 public:
  CuptiCapture();
  ~CuptiCapture();
  CuptiCapture(const CuptiCapture&) = delete;
  CuptiCapture& operator=(const CuptiCapture&) = delete;

  // Begins a capture window writing into `ring` (must stay valid until Finalize: a buffer
  // CUPTI hands over late is still decoded into it). False with
  // `*reason` set (e.g. "libcupti.so.13 not found", "no CUDA driver (cuInit: ...)",
  // "another CUPTI subscriber is active (Nsight Systems or Kineto?)") when CUPTI can't run;
  // the caller reports it as "unavailable: <reason>".
  bool Start(ring::RingWriter* ring, const CuptiOptions& options, std::string* reason);

  // Ends the window: flushes CUPTI's buffers and waits (bounded, ≤ 1 s) until the worker
  // has decoded them into the ring; PC-sampling data is written as kStall records (and
  // PC-sampling losses or failures after Start as one kStatus kComponentPcSampling
  // kStatusError record).
  void Stop();

  // Process exit or agent detach: cuptiFinalize (CUDA 13 segfaults at exit without it
  // once CUPTI was used) and the worker thread joined. Idempotent.
  void Finalize();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_CAPTURE_H_
