// Registration with the agent and the window commands, on the library's control thread.
//
//   connect(OPMAP_AGENT_SOCKET) → kHello (HelloBody + metadata, ring memfd attached)
//   ← kWelcome → serve: kStartWindow / kStopWindow / kDetach in; kWindowDone /
//   kStatusUpdate out. A window also ends by itself at its deadline.
//
// No agent (no socket, refused, no welcome within 5 s): stay dormant and retry with
// backoff, 1 s doubling to 30 s. Agent gone mid-window: the window ends (its end mark
// still goes into the ring), then reconnect. kDetach: end, finalize CUPTI, and the thread
// exits for good.
#ifndef OPMAP_AGENT_INJECT_CONTROL_CLIENT_H_
#define OPMAP_AGENT_INJECT_CONTROL_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "agent/inject/first_window.h"
#include "agent/inject/inject_config.h"
#include "agent/inject/ring_memfd.h"
#include "agent/inject/window.h"

namespace opmap::inject {

class ControlClient : public StatusSink {
 public:
  ControlClient(const InjectConfig& config, const RingMemory& ring, WindowController* windows,
                FirstWindowLatch* latch, const std::atomic<uint32_t>* loaded_by);

  void Run();  // the control thread's body; returns only after kDetach

  // Process exit: ends an open window and tells the agent (never blocks on the socket).
  void AtExit();

  void Status(uint16_t component, uint16_t code, std::string_view message) override;

 private:
  bool Hello(int fd);
  bool Serve(int fd);  // true: detached
  void EndAndReport(bool dont_wait);
  void SendDone(const ring::WindowDoneBody& done, bool dont_wait);

  const InjectConfig& config_;
  const RingMemory ring_;
  WindowController* const windows_;
  FirstWindowLatch* const latch_;
  const std::atomic<uint32_t>* const loaded_by_;
  std::mutex send_mu_;  // sends come from the control thread and from exit
  int fd_ = -1;         // guarded by send_mu_ (the control thread alone opens/closes it)
  uint64_t window_id_ = 0;  // the open window's id (0 = none): control thread only
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CONTROL_CLIENT_H_
