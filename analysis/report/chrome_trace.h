// Chrome-trace JSON (the format chrome://tracing, Perfetto UI and the PyTorch profiler
// use) from one or more Traces: `{"traceEvents":[...],"displayTimeUnit":"ns"}`.
//
// - GPU events: ph "X", cat "kernel" / "gpu_memcpy" / "gpu_memset", on a numeric pid of
//   their own per (trace, device) (kGpuPidBase + 256·trace_index + device) named
//   "GPU <device>" by a process_name metadata event; tid = stream ("stream N").
//   args: device, stream, correlation, "External id", grid, block, "registers per
//   thread", "shared memory", bytes — each only when known.
// - Launch API calls: cat "cuda_runtime" / "cuda_driver" on their process and thread;
//   args: correlation, "External id".
// - Ranges: cat "cpu_op" / "user_annotation" / "python_function" on their process and
//   thread; NVTX ranges are written as "user_annotation" with args.kind = "nvtx" (both
//   are operator ranges to the mapper). args: "External id".
// - ts and dur are µs with exactly three decimals, printed from the integer ns
//   (ns / 1000 "." ns % 1000): no floating point, so the Kineto importer reads back the
//   exact ns.
// - Names are JSON-escaped; invalid UTF-8 is replaced by U+FFFD.
// The categories and args are Kineto's, so `opmap analyze` reads an export back.
//
// Pure: strings in, strings out (or to a caller's sink); no I/O.
#ifndef OPMAP_ANALYSIS_REPORT_CHROME_TRACE_H_
#define OPMAP_ANALYSIS_REPORT_CHROME_TRACE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/trace.h"

namespace opmap::analysis {

inline constexpr int64_t kGpuPidBase = 1'000'000'000;

struct ChromeTraceOptions {
  // Events (not metadata) to write at most, over all traces; 0 = no limit. Events are
  // taken in start-time order within each trace, traces in the order they are added.
  uint64_t max_events = 0;
  // Only events that start in [start_ns, end_ns).
  int64_t start_ns = std::numeric_limits<int64_t>::min();
  int64_t end_ns = std::numeric_limits<int64_t>::max();
  // The writer hands its buffer to the sink whenever it holds at least this many bytes.
  size_t flush_bytes = 1 << 20;
};

// How to label one trace's processes in the viewer.
struct ChromeTraceSource {
  std::string label;                   // appended to process names, e.g. "host-a r42"; "" = none
  int64_t default_pid = kNone;         // host pid for events whose process is unknown
  std::vector<std::string> gpu_names;  // by device ordinal, e.g. "NVIDIA H200"; optional
  // What ran (framework, compiler, CUDA, driver versions...): written as one metadata
  // event {"ph":"M","name":"opmap_resource","args":{key: value}} when not empty, so a
  // reader (opmap report's reproducibility inputs) need not parse events.
  std::vector<std::pair<std::string, std::string>> resource;
};

class ChromeTraceWriter {
 public:
  // Receives the next bytes of the document; returns false to stop (e.g. the reader is
  // gone): Add then returns false and writes nothing more.
  using Sink = std::function<bool(std::string_view)>;

  // Without a sink everything stays buffered until Finish.
  explicit ChromeTraceWriter(ChromeTraceOptions options = {}, Sink sink = nullptr);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Appends one trace's events (each trace gets its own GPU pids). Returns false when
  // the sink stopped the writer.
  bool Add(const Trace& trace, const ChromeTraceSource& source = {});

  // Closes the document and returns the bytes not yet handed to the sink.
  std::string Finish();

  uint64_t events() const { return events_; }
  bool truncated() const { return truncated_; }
  // True once max_events is reached: further Adds write nothing (but note truncation
  // when they had events to write).
  bool full() const { return options_.max_events != 0 && events_ >= options_.max_events; }

 private:
  bool MaybeFlush();

  ChromeTraceOptions options_;
  Sink sink_;
  std::string buffer_;
  uint64_t events_ = 0;
  bool truncated_ = false;
  bool first_event_ = true;
  bool stopped_ = false;
  int64_t trace_index_ = 0;
};

struct ChromeTraceResult {
  std::string json;
  uint64_t events = 0;
  bool truncated = false;
};

// The whole document for one trace.
ChromeTraceResult RenderChromeTrace(const Trace& trace, const ChromeTraceOptions& options = {},
                                    const ChromeTraceSource& source = {});

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_CHROME_TRACE_H_
