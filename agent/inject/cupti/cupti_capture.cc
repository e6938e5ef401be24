#include "agent/inject/cupti/cupti_capture.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <new>
#include <string>
#include <vector>

#include "agent/inject/cupti/cupti_api.h"
#include "agent/inject/cupti/cupti_buffers.h"
#include "agent/inject/cupti/cupti_decode.h"
#include "agent/inject/cupti/cupti_graphs.h"
#include "agent/inject/cupti/cupti_pcsampling.h"

namespace opmap::inject {
namespace {

struct KindName {
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
};

constexpr auto kDrainWait = std::chrono::seconds(1);

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Holds CUPTI's single callback-subscriber slot for the window; no domain is enabled, so
// it is never called. Subscribing is how another CUPTI client (Nsight Systems, Kineto) is
// noticed before its activity buffers are taken over.
void CUPTIAPI NoopCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// Everything CUPTI's callbacks touch. (CuptiCapture::Impl is this; it is a separate type
// only because Impl is private to CuptiCapture.)
struct State {
  CuptiApi api;
  DriverApi driver;
  ActivityBuffers buffers{&api};

  // Control thread only.
  bool callbacks_registered = false;
  bool used_cupti = false;  // we (or our graph recorder) subscribed: cuptiFinalize is ours
  bool finalized = false;
  bool capturing = false;
  CUpti_SubscriberHandle subscriber = nullptr;  // the window's own; null when shared
  std::vector<const KindName*> enabled;
  PcSampler pc;
  bool pc_running = false;

  void DisableKinds() {
    for (auto it = enabled.rbegin(); it != enabled.rend(); ++it) {
      api.cuptiActivityDisable((*it)->kind);
    }
    enabled.clear();
  }
  void Unsubscribe() {
    if (subscriber != nullptr) api.cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
  }
};

// CUPTI's buffer callbacks carry no user pointer; one capture per process is active.
std::atomic<State*> g_active{nullptr};

// CUPTI asks for a buffer, on whichever thread needs one (possibly an application thread
// launching a kernel): no waiting, only an allocation within the bound.
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // as many as fit
  State* state = g_active.load(std::memory_order_acquire);
  if (state != nullptr) state->buffers.Request(buffer, size);
}

// CUPTI hands back a filled buffer (on its own thread, or the one calling flush).
void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                              size_t valid) {
  State* state = g_active.load(std::memory_order_acquire);
  if (state == nullptr) {
    std::free(buffer);  // after Finalize: nothing to decode into
    return;
  }
  // Records CUPTI could not store in this buffer's queue (it resets the count).
  size_t dropped = 0;
  if (state->api.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) {
    state->buffers.CountDrops(ring::kCuptiDropped, dropped);
  }
  state->buffers.Complete(buffer, valid);
}

}  // namespace

struct CuptiCapture::Impl : State {};

CuptiCapture::CuptiCapture() : impl_(new (std::nothrow) Impl) {}

CuptiCapture::~CuptiCapture() {
  if (impl_ == nullptr) return;
  Finalize();
  // Only a CUPTI that may still call back keeps the state alive (see Finalize).
  if (g_active.load(std::memory_order_acquire) != impl_) delete impl_;
}

bool CuptiCapture::Start(ring::RingWriter* ring, const CuptiOptions& options,
                         std::string* reason) {
  if (options.stalls_reason != nullptr) options.stalls_reason->clear();
  Impl* impl = impl_;
  if (impl == nullptr) {
    *reason = "out of memory";
    return false;
  }
  if (impl->finalized) {
    *reason = "CUPTI was finalized in this process (agent detached)";
    return false;
  }
  if (impl->capturing) {
    *reason = "a CUPTI capture window is already running";
    return false;
  }
  if (ring == nullptr || !ring->valid()) {
    *reason = "no ring to write into";
    return false;
  }
  State* other = g_active.load(std::memory_order_acquire);
  if (other != nullptr && other != impl) {
    *reason = "another CuptiCapture owns CUPTI in this process";
    return false;
  }
  if (!LoadCuptiApi(&impl->api, reason)) return false;
  // Before any activity call: without a working driver CUPTI answers CUPTI_ERROR_UNKNOWN
  // to everything, which would be a useless reason.
  if (!LoadDriverApi(&impl->driver, reason)) return false;

  // The graph recorder (OPMAP_GRAPH_NODES), when it runs, holds CUPTI's one subscriber
  // for the process: the window shares it and leaves it subscribed at Stop.
  CUptiResult r = CUPTI_SUCCESS;
  if (GraphRecordingSubscriber() == nullptr) {
    r = impl->api.cuptiSubscribe(&impl->subscriber, NoopCallback, nullptr);
    if (r != CUPTI_SUCCESS) {
      impl->subscriber = nullptr;
      *reason = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                    ? "another CUPTI subscriber is active (Nsight Systems or Kineto?)"
                    : CuptiFailure(impl->api, "cuptiSubscribe", r);
      return false;
    }
  }
  impl->used_cupti = true;
  // Every graph node is written again in this window, before its first event.
  GraphNodeTable* graphs = GraphRecordingTable();
  if (graphs != nullptr) graphs->BeginWindow();
  impl->buffers.SetGraphTable(graphs);

  impl->buffers.Configure(options.buffer_bytes, options.max_buffers,
                          options.max_queued_buffers);
  impl->buffers.SetRing(ring);
  g_active.store(impl, std::memory_order_release);
  if (!impl->buffers.StartWorker(reason)) {
    impl->Unsubscribe();
    return false;
  }
  if (!impl->callbacks_registered) {
    r = impl->api.cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
    if (r != CUPTI_SUCCESS) {
      *reason = CuptiFailure(impl->api, "cuptiActivityRegisterCallbacks", r);
      impl->Unsubscribe();
      return false;
    }
    impl->callbacks_registered = true;
  }
  for (const KindName& k : kKinds) {
    r = impl->api.cuptiActivityEnable(k.kind);
    if (r != CUPTI_SUCCESS) {
      const std::string what = std::string("cuptiActivityEnable(") + k.name + ")";
      *reason = CuptiFailure(impl->api, what.c_str(), r);
      impl->DisableKinds();
      impl->Unsubscribe();
      return false;
    }
    impl->enabled.push_back(&k);
  }
  impl->capturing = true;

  if (options.stalls) {
    PcSamplingOptions pc;
    pc.period_log2 = options.pc_sampling_period_log2;
    pc.hardware_buffer_bytes = options.pc_sampling_hw_buffer_bytes;
    std::string why;
    impl->pc_running = impl->pc.Start(impl->api, impl->driver, pc, &why);
    if (!impl->pc_running && options.stalls_reason != nullptr) *options.stalls_reason = why;
  }
  return true;
}

void CuptiCapture::Stop() {
  Impl* impl = impl_;
  if (impl == nullptr || !impl->capturing) return;
  ring::RingWriter* ring = impl->buffers.ring();
  if (impl->pc_running) {
    const std::string note = impl->pc.Stop(ring);
    impl->pc_running = false;
    if (!note.empty() && ring != nullptr) {
      const uint16_t n = ring::RingWriter::InlineLength(note);
      if (auto* s = ring->Reserve<ring::StatusRecord>(ring::kStatus, n)) {
        s->time_ns = RealtimeNs();
        s->component = ring::kComponentPcSampling;
        s->code = ring::kStatusError;
        s->message_len = n;
        ring::RingWriter::CopyAfter(s, std::string_view(note).substr(0, n));
        ring->Commit(&s->h, sizeof(*s) + n);
      }
    }
  }
  // Disable first, then flush: nothing recorded after the flush is left behind in a
  // buffer to surface in the next window. Records of kernels still running are delivered
  // by the forced flush with what they have (CUPTI may leave their timestamps 0).
  impl->DisableKinds();
  impl->api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // Records CUPTI dropped on its global queue (e.g. while we declined buffers).
  size_t dropped = 0;
  if (impl->api.cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    impl->buffers.CountDrops(ring::kCuptiDropped, dropped);
  }
  impl->buffers.WaitIdle(kDrainWait);
  impl->Unsubscribe();
  impl->capturing = false;
}

void CuptiCapture::Finalize() {
  Impl* impl = impl_;
  if (impl == nullptr || impl->finalized) return;
  impl->finalized = true;
  Stop();
  bool quiet = true;  // no CUPTI callback can arrive any more
  if (impl->used_cupti) {
    // Delivers and completes every outstanding buffer through our callbacks; CUPTI does
    // not call them afterwards. Only when we used CUPTI: finalizing it under another
    // client (Kineto in the same process) would end that client's session.
    quiet = impl->api.cuptiFinalize() == CUPTI_SUCCESS;
    NoteCuptiFinalized();
  }
  impl->buffers.StopWorker();  // decodes what is queued (bounded), then joins
  // A CUPTI that failed to finalize may still call back: the state stays (leaked by the
  // destructor) and the callbacks keep freeing buffers without decoding.
  if (quiet) {
    State* expected = impl;
    g_active.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
  } else {
    impl->buffers.SetRing(nullptr);
  }
}

}  // namespace opmap::inject
