// Capture windows: the one place that turns capture on and off. Begin writes the kWindow
// begin mark, turns the NVTX hooks on (window_state) and starts CUPTI when asked; End
// turns the hooks off, waits for hooks still writing, stops CUPTI (which flushes its
// buffers into the ring), writes the kWindow end mark and returns the window's counts.
// Components that cannot run say so twice: a kStatus record in the ring (the data path)
// and StatusSink (the control socket's kStatusUpdate, when there is one).
//
// Thread safety: every method takes the controller's lock, with a bound where the caller
// is the process exiting (it must never hang exit behind a stuck control thread).
#ifndef OPMAP_AGENT_INJECT_WINDOW_H_
#define OPMAP_AGENT_INJECT_WINDOW_H_

#include <cstdint>
#include <mutex>
#include <string_view>

#include "agent/inject/first_window.h"
#include "abi/ring_records.h"
#include "abi/control_messages.h"

namespace opmap::inject {

class CuptiCapture;

class StatusSink {
 public:
  virtual ~StatusSink() = default;
  virtual void Status(uint16_t component, uint16_t code, std::string_view message) = 0;
};

class WindowController {
 public:
  WindowController() = default;
  WindowController(const WindowController&) = delete;
  WindowController& operator=(const WindowController&) = delete;

  // False (reported through `sink`, which may be null) when a window is already open or
  // the controller was finalized. `armed` (may be null) is settled as soon as the NVTX
  // hooks are on — before CUPTI starts, which can take a while (and needs cuInit).
  bool Begin(uint64_t window_id, int64_t duration_ns, uint32_t flags, StatusSink* sink,
             FirstWindowLatch* armed = nullptr);
  // Ends the open window. False when none is open (or the lock was not had in time).
  bool End(ring::WindowDoneBody* done, int64_t lock_timeout_ns = kForever);
  // Detach or exit: ends an open window (its counts in *done, *ended true), finalizes
  // CUPTI (the graph recorder's too, OPMAP_GRAPH_NODES), and refuses windows from then
  // on. Idempotent.
  void Finalize(ring::WindowDoneBody* done, bool* ended, int64_t lock_timeout_ns = kForever);

  // Deadline of the open window (CLOCK_REALTIME ns); 0 when none is open.
  int64_t deadline_ns();

  static constexpr int64_t kForever = INT64_MAX;

 private:
  bool EndLocked(ring::WindowDoneBody* done);
  void Report(StatusSink* sink, uint16_t component, uint16_t code, std::string_view message);

  std::mutex mu_;
  bool open_ = false;
  bool finalized_ = false;
  uint32_t generation_ = 0;
  uint64_t window_id_ = 0;
  int64_t begin_ns_ = 0;
  int64_t deadline_ns_ = 0;
  uint64_t committed_at_begin_ = 0;
  uint64_t drops_at_begin_ = 0;
  bool cupti_running_ = false;
  CuptiCapture* cupti_ = nullptr;  // created at the first window that asks; never deleted
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_WINDOW_H_
