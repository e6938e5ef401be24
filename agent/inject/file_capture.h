// Debug mode without an agent (OPMAP_CAPTURE_FILE=PATH, OPMAP_CAPTURE_SECONDS=N): the
// library's own thread opens one window at once (NVTX + CUPTI, + stalls with
// OPMAP_STALLS=1), drains the ring itself every 20 ms into PATH (format:
// abi/capture_file_format.h), and after N seconds — or at process exit, whichever is first —
// ends the window, writes the trailer and goes dormant for good.
//
// The ring has one reader, so this mode never registers with an agent. The path is the
// process owner's own choice (their environment); an existing file is truncated, and a
// symlink at PATH is refused (O_NOFOLLOW).
#ifndef OPMAP_AGENT_INJECT_FILE_CAPTURE_H_
#define OPMAP_AGENT_INJECT_FILE_CAPTURE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "agent/inject/first_window.h"
#include "agent/inject/inject_config.h"
#include "agent/inject/ring_memfd.h"
#include "agent/inject/window.h"

namespace opmap::inject {

class FileCapture {
 public:
  FileCapture(const InjectConfig& config, const RingMemory& ring, WindowController* windows,
              FirstWindowLatch* latch, const std::atomic<uint32_t>* loaded_by);

  void Run();     // the capture thread's body
  void AtExit();  // ends the window and closes the file if Run has not (bounded wait)

 private:
  bool StartLocked();  // open the file and begin the window, once; with mu_ held
  bool Open();
  void Drain();
  void Finish();  // end window, final drain, trailer, close; with mu_ held
  void Flush();
  void Append(const void* bytes, size_t n);

  const InjectConfig& config_;
  const RingMemory ring_;
  WindowController* const windows_;
  FirstWindowLatch* const latch_;
  const std::atomic<uint32_t>* const loaded_by_;
  std::mutex mu_;  // the capture thread and exit both finish the file
  int fd_ = -1;
  bool started_ = false;
  bool done_ = false;
  std::string buffer_;
  uint64_t records_written_ = 0;
  uint64_t write_errors_ = 0;
  bool write_failed_ = false;
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_FILE_CAPTURE_H_
