// The control socket between libopmap_inject.so and the agent (Unix stream socket,
// OPMAP_AGENT_SOCKET, default /run/opmap/agent.sock). Every message is a ControlHeader
// followed by `body_len` bytes. The library connects and sends kHello with the ring's
// memfd attached (SCM_RIGHTS); the agent checks the peer's credentials (SO_PEERCRED: root
// or the same uid) before it answers. Explicitly sized types, each size static_asserted.
#ifndef OPMAP_ABI_CONTROL_MESSAGES_H_
#define OPMAP_ABI_CONTROL_MESSAGES_H_

#include <cstdint>

namespace opmap::ring {


constexpr uint32_t kControlMagic = 0x434D504F;  // "OPMC"
constexpr uint32_t kMaxControlBody = 16 * 1024;
constexpr const char* kDefaultAgentSocket = "/run/opmap/agent.sock";

enum ControlType : uint16_t {
  kHello = 1,        // lib → agent: HelloBody + metadata text; memfd attached
  kWelcome = 2,      // agent → lib: accepted (no body)
  kStartWindow = 3,  // agent → lib: StartWindowBody
  kStopWindow = 4,   // agent → lib: StopWindowBody (end the window now)
  kWindowDone = 5,   // lib → agent: WindowDoneBody (after the kWindow end record)
  kDetach = 6,       // agent → lib: stop everything, finalize CUPTI, go dormant for good
  kStatusUpdate = 7, // lib → agent: StatusUpdateBody + message text
};

struct ControlHeader {
  uint32_t magic;  // kControlMagic
  uint16_t type;   // ControlType
  uint16_t reserved;
  uint32_t body_len;
  uint32_t reserved2;
};
static_assert(sizeof(ControlHeader) == 16);

// kHello body; then `metadata_len` bytes of "key=value\n" lines (model, model_revision,
// precision, framework, cuda_runtime, cupti, driver, cmdline, ... — unknown keys are kept).
struct HelloBody {
  uint32_t version;  // kVersion
  uint32_t pid;
  uint64_t ring_capacity;
  uint32_t capabilities;  // CaptureFlags the library can do in this process
  uint32_t metadata_len;
};
static_assert(sizeof(HelloBody) == 24);

enum CaptureFlags : uint32_t {
  kCaptureNvtx = 1,
  kCaptureCupti = 2,
  kCaptureStalls = 4,
};

struct StartWindowBody {
  uint64_t window_id;
  int64_t duration_ns;  // the library ends the window by itself after this long
  uint32_t flags;       // CaptureFlags
  uint32_t reserved;
};
static_assert(sizeof(StartWindowBody) == 24);

struct StopWindowBody {
  uint64_t window_id;
};
static_assert(sizeof(StopWindowBody) == 8);

struct WindowDoneBody {
  uint64_t window_id;
  int64_t begin_ns;
  int64_t end_ns;
  uint64_t records;  // records published during the window
  uint64_t drops;    // drops (all causes) during the window
};
static_assert(sizeof(WindowDoneBody) == 40);

struct StatusUpdateBody {
  uint16_t component;  // Component
  uint16_t code;       // StatusCode
  uint32_t message_len;
};
static_assert(sizeof(StatusUpdateBody) == 8);

}  // namespace opmap::ring

#endif  // OPMAP_ABI_CONTROL_MESSAGES_H_
