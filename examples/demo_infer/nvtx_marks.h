// The demo's NVTX annotations: one domain ("opmap.demo"), one registered string per fixed
// message, push/pop ranges on the worker thread and start/end ranges that cross threads
// (a request starts on its client and ends on the worker that finished it).
//
// NVTX is header-only: every call is a no-op until a tool is loaded through
// NVTX_INJECTION64_PATH, so the program computes the same results with and without one.
// The counts reported at the end are of the annotation calls this program made, which do
// not depend on whether a tool received them. Built without the nvtx3 headers
// (OPMAP_DEMO_HAVE_NVTX undefined) the calls vanish and only the counting remains.
//
// Thread safety: Register() only before the worker and client threads start; everything
// else from any thread.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_NVTX_MARKS_H_
#define OPMAP_EXAMPLES_DEMO_INFER_NVTX_MARKS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

namespace opmap::demo {

using MarkId = int;
using RangeId = uint64_t;  // nvtxRangeId_t

class NvtxMarks {
 public:
  NvtxMarks();
  NvtxMarks(const NvtxMarks&) = delete;
  NvtxMarks& operator=(const NvtxMarks&) = delete;

  // `message` is what the NVTX tool sees; `count_key` groups counts (the message without
  // its {flops=..,bytes=..} suffix). Registering the same message twice returns one id.
  MarkId Register(const std::string& count_key, const std::string& message);

  // Payload, when given, is an UNSIGNED_INT64 in the event attributes.
  void Push(MarkId mark, const uint64_t* payload = nullptr);
  void Pop();
  // An NVTX mark (nvtxDomainMarkEx): an instant with a payload.
  void Instant(MarkId mark, uint64_t payload);
  RangeId Start(MarkId mark, uint64_t payload);
  void End(RangeId range);

  // "enabled" or "unavailable: <reason>".
  static std::string Status();
  // count_key -> ranges emitted.
  std::map<std::string, uint64_t> Counts() const;

 private:
  struct Mark {
    std::string count_key;
    std::string message;
    void* handle = nullptr;  // nvtxStringHandle_t
    std::atomic<uint64_t> count{0};
  };
  void* domain_ = nullptr;  // nvtxDomainHandle_t
  std::deque<Mark> marks_;  // deque: Mark holds an atomic, so it must never move
};

// Push on construction, pop on destruction: ranges stay balanced on every path.
class ScopedRange {
 public:
  ScopedRange(NvtxMarks& marks, MarkId mark) : marks_(marks) { marks_.Push(mark); }
  ScopedRange(NvtxMarks& marks, MarkId mark, uint64_t payload) : marks_(marks) {
    marks_.Push(mark, &payload);
  }
  ~ScopedRange() { marks_.Pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  NvtxMarks& marks_;
};

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_NVTX_MARKS_H_
