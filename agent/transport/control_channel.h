// The agent's end of the control socket (abi/control_messages.h):
// listen, accept a library, check who it is, take its ring, and drive windows.
//
//   ASSIGN_OR_RETURN(auto listener, ControlListener::Listen("/run/opmap/agent.sock"));
//   ASSIGN_OR_RETURN(auto channel, listener->Accept(absl::Seconds(5)));
//   ASSIGN_OR_RETURN(auto ring, RingReader::AttachFd(channel->TakeRingFd()));
//   RETURN_IF_ERROR(channel->StartWindow(1, absl::Seconds(10), ring::kCaptureNvtx));
//   ... drain `ring`; channel->Read(...) yields kWindowDone / kStatusUpdate ...
//
// Who may register: SO_PEERCRED is checked before a byte is read — root, or the uid this
// agent runs as; anyone else is refused (PermissionDenied) and the connection closed. The
// hello is validated like any input from another process: magic, type, sizes, version,
// and exactly one fd attached.
//
// Thread safety: a ControlChannel is used from one thread at a time.
// Fuzzed by tests/fuzz/control_message_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_AGENT_TRANSPORT_CONTROL_CHANNEL_H_
#define OPMAP_AGENT_TRANSPORT_CONTROL_CHANNEL_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "abi/ring_records.h"
#include "abi/control_messages.h"

namespace opmap::transport {

struct Hello {
  pid_t peer_pid = 0;  // SO_PEERCRED, in the agent's pid namespace
  uid_t peer_uid = 0;
  ring::HelloBody body{};
  std::map<std::string, std::string> metadata;  // "key=value" lines; last one wins
};

struct ControlMessage {
  uint16_t type = 0;  // ring::ControlType
  std::string body;
};

class ControlChannel {
 public:
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // Reads and checks the hello on a connection whose peer credentials were already
  // checked (unix_socket.h AcceptPeer), then answers kWelcome. Takes `fd` (closed on error).
  static absl::StatusOr<std::unique_ptr<ControlChannel>> FromAcceptedPeer(
      int fd, const ucred& cred, absl::Duration timeout);

  const Hello& hello() const { return hello_; }
  // The ring memfd from the hello; the caller owns it from now (-1 if taken already).
  int TakeRingFd();

  absl::Status StartWindow(uint64_t window_id, absl::Duration duration, uint32_t flags);
  absl::Status StopWindow(uint64_t window_id);
  absl::Status Detach();

  // The next message from the library; nullopt when none began within `timeout`.
  absl::StatusOr<std::optional<ControlMessage>> Read(absl::Duration timeout);

  static absl::StatusOr<ring::WindowDoneBody> ParseWindowDone(const ControlMessage& m);
  struct StatusUpdate {
    uint16_t component = 0;
    uint16_t code = 0;
    std::string message;
  };
  static absl::StatusOr<StatusUpdate> ParseStatusUpdate(const ControlMessage& m);

 private:
  friend class ControlListener;
  ControlChannel(int fd, int ring_fd, Hello hello)
      : fd_(fd), ring_fd_(ring_fd), hello_(std::move(hello)) {}
  absl::Status Send(uint16_t type, const void* body, size_t n);

  int fd_;
  int ring_fd_;
  Hello hello_;
};

class ControlListener {
 public:
  // Binds a Unix stream socket at `path` (a stale socket file there is replaced; any other
  // kind of file is an error). The socket is world-connectable: peer credentials decide.
  static absl::StatusOr<std::unique_ptr<ControlListener>> Listen(const std::string& path);
  ~ControlListener();  // closes and unlinks
  ControlListener(const ControlListener&) = delete;
  ControlListener& operator=(const ControlListener&) = delete;

  // Waits up to `timeout` for a library, checks its credentials, reads its hello (bounded
  // by the same timeout) and answers kWelcome. DeadlineExceeded when nobody connected.
  absl::StatusOr<std::unique_ptr<ControlChannel>> Accept(absl::Duration timeout);

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  ControlListener(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace opmap::transport

#endif  // OPMAP_AGENT_TRANSPORT_CONTROL_CHANNEL_H_
