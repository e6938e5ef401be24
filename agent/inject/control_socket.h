// The library's end of the control socket: connect, framed send (optionally with the
// ring's fd attached) and framed receive. Plain syscalls with bounded waits; every send
// uses MSG_NOSIGNAL, so an agent that goes away can never raise SIGPIPE in the host.
#ifndef OPMAP_AGENT_INJECT_CONTROL_SOCKET_H_
#define OPMAP_AGENT_INJECT_CONTROL_SOCKET_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "abi/control_messages.h"

namespace opmap::inject {

// A connected, blocking, close-on-exec stream socket (sends time out after 1 s), or -1.
int ConnectUnix(const std::string& path, int timeout_ms);

// Sends one message: ControlHeader, then `body`, then `extra` (body_len covers both).
// `pass_fd` >= 0 rides along with SCM_RIGHTS. `dont_wait`: never block (the exit path).
bool SendMessage(int fd, uint16_t type, const void* body, size_t body_len, const void* extra,
                 size_t extra_len, int pass_fd = -1, bool dont_wait = false);

enum class ReadResult { kMessage, kTimeout, kClosed };

// Waits up to `timeout_ms` (-1: forever) for a message to begin; once its header has
// started arriving, the rest must follow within 5 s. Bad magic or a body larger than
// kMaxControlBody reads as kClosed: the peer is not speaking this protocol.
ReadResult ReadMessage(int fd, int timeout_ms, ring::ControlHeader* header, std::string* body);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CONTROL_SOCKET_H_
