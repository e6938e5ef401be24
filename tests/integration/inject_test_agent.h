// Test support for libopmap_inject.so: a stand-in agent (listens on a private socket,
// accepts the library's hello, maps its ring, drives windows, drains records — with the
// real opmap_transport code the agent will use), a child-process runner that controls
// exactly which opmap/NVTX variables the child sees, and decoders for the records the
// tests assert on.
#ifndef OPMAP_TESTS_INTEGRATION_INJECT_TEST_AGENT_H_
#define OPMAP_TESTS_INTEGRATION_INJECT_TEST_AGENT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/transport/control_channel.h"
#include "agent/transport/ring_reader.h"
#include "abi/ring_records.h"

namespace opmap::inject_test {

std::string InjectLibPath();   // build/lib/libopmap_inject.so
std::string HostProgramPath(); // the inject_nvtx_host test program
// opmap-demo-infer: $OPMAP_DEMO_INFER_BIN, else build/bin/opmap-demo-infer. Empty if absent.
std::string DemoPath();

// A private temporary directory, removed (with its files) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// A child process with pipes on stdin and stdout (stderr is inherited). Its environment
// is ours minus every OPMAP_*, NVTX_INJECTION*, CUDA_INJECTION* and LD_PRELOAD variable,
// plus `env`.
struct Child {
  pid_t pid = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
};
Child Spawn(const std::vector<std::string>& argv, const EnvVars& env);

struct ExitInfo {
  bool exited = false;  // false: killed after the timeout (or by a signal)
  int code = -1;
  double cpu_seconds = 0;  // user + system, from wait4
  std::string stdout_text; // everything the child printed that the test had not read
};
// Closes the child's stdin, collects its stdout, waits (killing it after `timeout`).
ExitInfo Finish(Child& child, absl::Duration timeout);
// One line from the child's stdout (without the newline); nullopt on EOF or timeout.
std::optional<std::string> ReadLine(Child& child, absl::Duration timeout);
void WriteLine(Child& child, const std::string& line);

// The stand-in agent.
class TestAgent {
 public:
  explicit TestAgent(const std::string& socket_path);
  ~TestAgent();

  // Accepts one library and attaches to its ring.
  absl::Status Accept(absl::Duration timeout);
  transport::ControlChannel& channel() { return *channel_; }
  transport::RingReader& reader() { return *reader_; }
  void CloseChannel() { channel_.reset(); }

  // Drains what is committed now into records(); returns the drain status.
  absl::Status DrainOnce();
  // A background thread draining every millisecond until StopDraining.
  void StartDraining();
  absl::Status StopDraining();
  // Drains until a record satisfies `pred` (checked on new records only).
  bool DrainUntil(const std::function<bool(std::span<const uint8_t>)>& pred,
                  absl::Duration timeout);

  std::vector<std::string> records();

  // Reads control messages until one of `type` arrives (others are kept in messages()).
  std::optional<transport::ControlMessage> WaitForMessage(uint16_t type, absl::Duration timeout);
  const std::vector<transport::ControlMessage>& messages() const { return messages_; }

 private:
  std::unique_ptr<transport::ControlListener> listener_;
  std::unique_ptr<transport::ControlChannel> channel_;
  std::unique_ptr<transport::RingReader> reader_;
  std::mutex mu_;
  std::vector<std::string> records_;
  size_t checked_ = 0;  // records DrainUntil has looked at
  std::thread drainer_;
  std::atomic<bool> stop_{false};
  absl::Status drain_status_;
  std::vector<transport::ControlMessage> messages_;
};

// Decoded views of records, for assertions.
struct Range {
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
  uint64_t domain_id = 0, payload = 0;
  uint32_t tid = 0, category = 0, color = 0;
  uint16_t depth = 0, flags = 0;
  uint8_t payload_kind = 0;
};
struct RangeStart {
  std::string name;
  uint64_t range_id = 0, domain_id = 0, payload = 0;
  int64_t start_ns = 0;
  uint32_t tid = 0;
};
struct Status {
  uint16_t component = 0, code = 0;
  std::string message;
};

std::vector<Range> Ranges(const std::vector<std::string>& records);
std::vector<RangeStart> RangeStarts(const std::vector<std::string>& records);
std::vector<ring::RangeEndRecord> RangeEnds(const std::vector<std::string>& records);
std::vector<std::pair<uint64_t, std::string>> Domains(const std::vector<std::string>& records);
std::vector<Status> Statuses(const std::vector<std::string>& records);
std::vector<ring::WindowRecord> Windows(const std::vector<std::string>& records);
size_t CountType(const std::vector<std::string>& records, uint16_t type);
bool IsWindowMark(std::span<const uint8_t> record, uint32_t mark);

}  // namespace opmap::inject_test

#endif  // OPMAP_TESTS_INTEGRATION_INJECT_TEST_AGENT_H_
