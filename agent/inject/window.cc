#include "agent/inject/window.h"

#include <string>

#include "agent/inject/bounded_lock.h"
#include "agent/inject/capture_state.h"
#include "agent/inject/ring_writer.h"

#if OPMAP_INJECT_HAVE_CUPTI
#include "agent/inject/cupti/cupti_capture.h"
#include "agent/inject/cupti/cupti_graphs.h"
#endif

namespace opmap::inject {
namespace {

using ring::RingWriter;

bool Lock(std::mutex& mu, int64_t timeout_ns) {
  if (timeout_ns == WindowController::kForever) {
    mu.lock();
    return true;
  }
  return LockWithin(mu, timeout_ns);
}

void WriteMark(uint64_t window_id, int64_t time_ns, ring::WindowMark mark) {
  RingWriter& w = g_state.writer;
  auto* r = w.Reserve<ring::WindowRecord>(ring::kWindow, 0);
  if (r == nullptr) return;  // counted as kRingFull; the window's counts still go out
  r->window_id = window_id;
  r->time_ns = time_ns;
  r->mark = mark;
  w.Commit(&r->h, sizeof(*r));
}

uint64_t DropsNow() {
  uint64_t sum = 0;
  for (const auto& d : g_state.writer.header()->drops) sum += d.load(std::memory_order_relaxed);
  return sum;
}

uint64_t CommittedNow() {
  return g_state.writer.header()->records_committed.load(std::memory_order_relaxed);
}

#if !OPMAP_INJECT_HAVE_CUPTI
constexpr char kCuptiNotBuilt[] = "CUPTI support not built";
#endif

}  // namespace

void WindowController::Report(StatusSink* sink, uint16_t component, uint16_t code,
                              std::string_view message) {
  RingWriter& w = g_state.writer;
  const uint16_t n = RingWriter::InlineLength(message);
  if (auto* r = w.Reserve<ring::StatusRecord>(ring::kStatus, n)) {
    r->time_ns = NowNs();
    r->component = component;
    r->code = code;
    r->message_len = n;
    RingWriter::CopyAfter(r, message.substr(0, n));
    w.Commit(&r->h, sizeof(*r) + n);
  }
  if (sink != nullptr) sink->Status(component, code, message);
}

bool WindowController::Begin(uint64_t window_id, int64_t duration_ns, uint32_t flags,
                             StatusSink* sink, FirstWindowLatch* armed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!g_state.writer.valid()) return false;
  if (finalized_ || open_) {
    const std::string why = finalized_ ? "detached: no more windows in this process"
                                       : "window " + std::to_string(window_id_) +
                                             " is still open";
    if (sink != nullptr) sink->Status(ring::kComponentNvtx, ring::kStatusError, why);
    return false;
  }
  ++generation_;
  begin_ns_ = NowNs();
  window_id_ = window_id;
  deadline_ns_ = duration_ns > 0 && duration_ns < INT64_MAX - begin_ns_ ? begin_ns_ + duration_ns
                                                                        : INT64_MAX;
  WriteMark(window_id, begin_ns_, ring::kWindowBegin);
  committed_at_begin_ = CommittedNow();
  drops_at_begin_ = DropsNow();
  open_ = true;

  if ((flags & ring::kCaptureNvtx) != 0) {
    if (!g_nvtx_attached.load(std::memory_order_acquire)) {
      // Still switched on: the application's first NVTX call may attach us mid-window.
      Report(sink, ring::kComponentNvtx, ring::kStatusUnavailable,
             "no NVTX call has attached the library yet (NVTX_INJECTION64_PATH unset, "
             "or no NVTX call so far in this process)");
    }
  }
  // Only the NVTX bit is read by hooks; the generation tells windows apart.
  StoreWindowState((uint64_t{generation_} << 32) | (flags & ring::kCaptureNvtx));
  if (armed != nullptr) armed->Settle();

  if ((flags & (ring::kCaptureCupti | ring::kCaptureStalls)) != 0) {
#if OPMAP_INJECT_HAVE_CUPTI
    if (cupti_ == nullptr) cupti_ = new CuptiCapture();
    CuptiOptions options;
    options.stalls = (flags & ring::kCaptureStalls) != 0;
    std::string reason;
    std::string stalls_reason;
    options.stalls_reason = &stalls_reason;
    if (cupti_->Start(&g_state.writer, options, &reason)) {
      cupti_running_ = true;
      Report(sink, ring::kComponentCupti, ring::kStatusOk, "capturing");
      if (options.stalls && !stalls_reason.empty()) {
        Report(sink, ring::kComponentPcSampling, ring::kStatusUnavailable, stalls_reason);
      }
    } else {
      Report(sink, ring::kComponentCupti, ring::kStatusUnavailable, reason);
      if (options.stalls) {
        Report(sink, ring::kComponentPcSampling, ring::kStatusUnavailable,
               "CUPTI unavailable: " + reason);
      }
    }
#else
    Report(sink, ring::kComponentCupti, ring::kStatusUnavailable, kCuptiNotBuilt);
    if ((flags & ring::kCaptureStalls) != 0) {
      Report(sink, ring::kComponentPcSampling, ring::kStatusUnavailable, kCuptiNotBuilt);
    }
#endif
#if OPMAP_INJECT_HAVE_CUPTI
    // OPMAP_GRAPH_NODES: recording, why not, or what did not fit — in every window, since
    // graphs are usually built before the first one. In the ring only: agents before this
    // component name every unknown component "nvtx" in their kStatusUpdate handling.
    uint16_t code = ring::kStatusOk;
    std::string message;
    if (GraphRecordingStatus(&code, &message)) {
      Report(nullptr, ring::kComponentGraphNodes, code, message);
    }
#endif
  }
  return true;
}

bool WindowController::EndLocked(ring::WindowDoneBody* done) {
  if (!open_) return false;
  // Hooks off (the generation stays, so stacks of this window are recognised as stale
  // later), then wait for the hooks that decided to write under this window.
  StoreWindowState(uint64_t{generation_} << 32);
  WaitForWriters(100'000'000);
#if OPMAP_INJECT_HAVE_CUPTI
  if (cupti_running_) cupti_->Stop();  // flushes CUPTI's buffers into the ring
#endif
  cupti_running_ = false;
  const int64_t end_ns = NowNs();
  done->window_id = window_id_;
  done->begin_ns = begin_ns_;
  done->end_ns = end_ns;
  done->records = CommittedNow() - committed_at_begin_;  // the marks themselves excluded
  WriteMark(window_id_, end_ns, ring::kWindowEnd);
  done->drops = DropsNow() - drops_at_begin_;  // a lost end mark included: it was lost too
  open_ = false;
  deadline_ns_ = 0;
  return true;
}

bool WindowController::End(ring::WindowDoneBody* done, int64_t lock_timeout_ns) {
  if (!Lock(mu_, lock_timeout_ns)) return false;
  std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
  return EndLocked(done);
}

void WindowController::Finalize(ring::WindowDoneBody* done, bool* ended,
                                int64_t lock_timeout_ns) {
  *ended = false;
  if (!Lock(mu_, lock_timeout_ns)) return;
  std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
  if (finalized_) return;
  *ended = EndLocked(done);
#if OPMAP_INJECT_HAVE_CUPTI
  if (cupti_ != nullptr) cupti_->Finalize();
  FinalizeGraphRecording();  // the graph recorder used CUPTI even if no window did
#endif
  finalized_ = true;
}

int64_t WindowController::deadline_ns() {
  std::lock_guard<std::mutex> lock(mu_);
  return open_ ? deadline_ns_ : 0;
}

}  // namespace opmap::inject
