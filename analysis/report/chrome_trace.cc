#include "analysis/report/chrome_trace.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/text/json_writer.h"
#include "common/text/units.h"

namespace opmap::analysis {
namespace {

enum class ItemType : uint8_t { kRange = 0, kApi = 1, kGpu = 2 };

struct Item {
  int64_t start_ns;
  ItemType type;
  uint32_t index;
};

const char* GpuCategory(GpuEventKind kind) {
  switch (kind) {
    case GpuEventKind::kKernel: return "kernel";
    case GpuEventKind::kMemcpy: return "gpu_memcpy";
    case GpuEventKind::kMemset: return "gpu_memset";
  }
  return "kernel";
}

const char* RangeCategory(RangeKind kind) {
  switch (kind) {
    case RangeKind::kCpuOp: return "cpu_op";
    case RangeKind::kUserAnnotation: return "user_annotation";
    case RangeKind::kNvtx: return "user_annotation";
    case RangeKind::kPythonFunction: return "python_function";
  }
  return "cpu_op";
}

// Writes the args object's members one by one, with commas.
class Args {
 public:
  explicit Args(std::string* out) : out_(out) {}
  std::string* Key(std::string_view key) {
    out_->append(first_ ? ",\"args\":{" : ",");
    first_ = false;
    out_->push_back('"');
    out_->append(key);
    out_->append("\":");
    return out_;
  }
  void Int(std::string_view key, int64_t v) { absl::StrAppend(Key(key), v); }
  void Dim3(std::string_view key, const std::array<int32_t, 3>& d) {
    absl::StrAppend(Key(key), "[", d[0], ",", d[1], ",", d[2], "]");
  }
  void Close() {
    if (!first_) out_->push_back('}');
  }

 private:
  std::string* out_;
  bool first_ = true;
};

void AppendEventHead(const char* cat, std::string_view name, int64_t pid, int64_t tid,
                     int64_t start_ns, int64_t dur_ns, std::string* out) {
  out->append("{\"ph\":\"X\",\"cat\":\"");
  out->append(cat);
  out->append("\",\"name\":");
  text::AppendJsonEscaped(name, out);
  absl::StrAppend(out, ",\"pid\":", pid, ",\"tid\":", tid, ",\"ts\":");
  text::AppendNanosAsMicros(start_ns, out);
  out->append(",\"dur\":");
  text::AppendNanosAsMicros(dur_ns, out);
}

void AppendMetadata(const char* what, int64_t pid, int64_t tid, std::string_view name,
                    std::string* out) {
  absl::StrAppend(out, "{\"ph\":\"M\",\"name\":\"", what, "\",\"pid\":", pid, ",\"tid\":", tid,
                  ",\"args\":{\"name\":");
  text::AppendJsonEscaped(name, out);
  out->append("}}");
}

// True when `s` is a JSON array of integers and arrays of the same (Kineto's "Input
// Dims", e.g. "[[2, 3], [], [3]]"), so it can be written raw. Anything else is left out.
bool IsDimsArray(std::string_view s) {
  size_t i = 0;
  int depth = 0;
  auto skip_ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  };
  skip_ws();
  if (i >= s.size() || s[i] != '[') return false;
  // State: after '[' or ',' expect a value (or ']' right after '['); after a value
  // expect ',' or ']'.
  bool expect_value = true, after_open = false;
  while (i < s.size()) {
    skip_ws();
    if (i >= s.size()) return false;
    char c = s[i];
    if (expect_value) {
      if (c == '[') {
        if (++depth > 8) return false;
        ++i;
        after_open = true;
        continue;
      }
      if (c == ']' && after_open) {
        expect_value = false;
        after_open = false;
        continue;  // handled as a close below
      }
      if (depth == 0) return false;
      if (c == '-') ++i;
      size_t digits = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      if (i == digits || (s[digits] == '0' && i - digits > 1)) return false;
      expect_value = false;
      after_open = false;
      continue;
    }
    if (c == ',') {
      if (depth == 0) return false;
      ++i;
      expect_value = true;
      continue;
    }
    if (c == ']') {
      if (depth == 0) return false;
      ++i;
      --depth;
      if (depth == 0) {
        skip_ws();
        return i == s.size();
      }
      continue;
    }
    return false;
  }
  return false;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(ChromeTraceOptions options, Sink sink)
    : options_(options), sink_(std::move(sink)) {
  buffer_ = "{\"traceEvents\":[\n";
}

bool ChromeTraceWriter::MaybeFlush() {
  if (stopped_) return false;
  if (!sink_ || buffer_.size() < options_.flush_bytes) return true;
  if (!sink_(buffer_)) {
    stopped_ = true;
    return false;
  }
  buffer_.clear();
  return true;
}

bool ChromeTraceWriter::Add(const Trace& trace, const ChromeTraceSource& source) {
  if (stopped_) return false;
  const int64_t trace_index = trace_index_++;

  // The events in the range, in start order.
  std::vector<Item> items;
  auto in_range = [&](int64_t start) {
    return start >= options_.start_ns && start < options_.end_ns;
  };
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    if (in_range(trace.ranges[i].start_ns)) {
      items.push_back({trace.ranges[i].start_ns, ItemType::kRange, static_cast<uint32_t>(i)});
    }
  }
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    if (in_range(trace.api_calls[i].start_ns)) {
      items.push_back({trace.api_calls[i].start_ns, ItemType::kApi, static_cast<uint32_t>(i)});
    }
  }
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    if (in_range(trace.gpu_events[i].start_ns)) {
      items.push_back({trace.gpu_events[i].start_ns, ItemType::kGpu, static_cast<uint32_t>(i)});
    }
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.type != b.type) return a.type < b.type;
    return a.index < b.index;
  });
  if (options_.max_events != 0) {
    uint64_t room = events_ >= options_.max_events ? 0 : options_.max_events - events_;
    if (items.size() > room) {
      items.resize(room);
      truncated_ = true;
    }
  }
  if (items.empty()) return true;

  int64_t fallback_pid = source.default_pid != kNone ? source.default_pid
                         : trace.info.process != kNone ? trace.info.process
                                                       : 0;
  auto host_pid = [&](int64_t process) { return process != kNone ? process : fallback_pid; };
  auto host_tid = [](int64_t thread) { return thread != kNone ? thread : 0; };
  auto gpu_pid = [&](int32_t device) {
    return kGpuPidBase + trace_index * 256 + (static_cast<uint32_t>(device) & 0xff);
  };

  // Metadata for the processes and GPU streams that appear.
  std::set<int64_t> host_pids;
  std::map<int32_t, std::set<int64_t>> gpu_streams;  // device -> streams
  for (const Item& item : items) {
    switch (item.type) {
      case ItemType::kRange: host_pids.insert(host_pid(trace.ranges[item.index].process)); break;
      case ItemType::kApi: host_pids.insert(host_pid(trace.api_calls[item.index].process)); break;
      case ItemType::kGpu: {
        const GpuEvent& g = trace.gpu_events[item.index];
        gpu_streams[g.device].insert(g.stream);
        break;
      }
    }
  }
  auto separate = [&] {
    if (!first_event_) buffer_.append(",\n");
    first_event_ = false;
  };
  const std::string suffix = source.label.empty() ? "" : " " + source.label;
  if (!source.resource.empty()) {
    separate();
    absl::StrAppend(&buffer_, "{\"ph\":\"M\",\"name\":\"opmap_resource\",\"pid\":",
                    host_pid(source.default_pid), ",\"tid\":0,\"args\":{");
    for (size_t i = 0; i < source.resource.size(); ++i) {
      if (i > 0) buffer_.append(",");
      text::AppendJsonEscaped(source.resource[i].first, &buffer_);
      buffer_.append(":");
      text::AppendJsonEscaped(source.resource[i].second, &buffer_);
    }
    buffer_.append("}}");
  }
  for (int64_t pid : host_pids) {
    separate();
    AppendMetadata("process_name", pid, 0, absl::StrCat("host", suffix), &buffer_);
  }
  for (const auto& [device, streams] : gpu_streams) {
    std::string name = absl::StrCat("GPU ", device);
    if (device >= 0 && static_cast<size_t>(device) < source.gpu_names.size() &&
        !source.gpu_names[device].empty()) {
      absl::StrAppend(&name, " (", source.gpu_names[device], ")");
    }
    separate();
    AppendMetadata("process_name", gpu_pid(device), 0, absl::StrCat(name, suffix), &buffer_);
    for (int64_t stream : streams) {
      separate();
      AppendMetadata("thread_name", gpu_pid(device), stream, absl::StrCat("stream ", stream),
                     &buffer_);
    }
  }
  if (!MaybeFlush()) return false;

  for (const Item& item : items) {
    separate();
    switch (item.type) {
      case ItemType::kGpu: {
        const GpuEvent& g = trace.gpu_events[item.index];
        AppendEventHead(GpuCategory(g.kind), trace.strings.Get(g.name), gpu_pid(g.device),
                        g.stream, g.start_ns, g.dur_ns, &buffer_);
        Args args(&buffer_);
        args.Int("device", g.device);
        args.Int("stream", g.stream);
        if (g.correlation != kNone) args.Int("correlation", g.correlation);
        if (g.external_id != kNone) args.Int("External id", g.external_id);
        if (g.graph_id != kNone) args.Int("graph id", g.graph_id);
        if (g.graph_node_id != kNone) args.Int("graph node id", g.graph_node_id);
        if (g.grid != std::array<int32_t, 3>{0, 0, 0}) args.Dim3("grid", g.grid);
        if (g.block != std::array<int32_t, 3>{0, 0, 0}) args.Dim3("block", g.block);
        if (g.registers_per_thread >= 0) args.Int("registers per thread", g.registers_per_thread);
        if (g.shared_memory_bytes != kNone) args.Int("shared memory", g.shared_memory_bytes);
        if (g.bytes != kNone) args.Int("bytes", g.bytes);
        args.Close();
        break;
      }
      case ItemType::kApi: {
        const ApiCall& a = trace.api_calls[item.index];
        AppendEventHead(a.kind == ApiKind::kRuntime ? "cuda_runtime" : "cuda_driver",
                        trace.strings.Get(a.name), host_pid(a.process), host_tid(a.thread),
                        a.start_ns, a.dur_ns, &buffer_);
        Args args(&buffer_);
        if (a.correlation != kNone) args.Int("correlation", a.correlation);
        if (a.external_id != kNone) args.Int("External id", a.external_id);
        args.Close();
        break;
      }
      case ItemType::kRange: {
        const Range& r = trace.ranges[item.index];
        AppendEventHead(RangeCategory(r.kind), trace.strings.Get(r.name), host_pid(r.process),
                        host_tid(r.thread), r.start_ns, r.dur_ns, &buffer_);
        Args args(&buffer_);
        if (r.external_id != kNone) args.Int("External id", r.external_id);
        if (r.kind == RangeKind::kNvtx) text::AppendJsonEscaped("nvtx", args.Key("kind"));
        if (r.input_dims != kEmptyString) {
          std::string_view dims = trace.strings.Get(r.input_dims);
          if (IsDimsArray(dims)) args.Key("Input Dims")->append(dims);
        }
        args.Close();
        break;
      }
    }
    buffer_.push_back('}');
    ++events_;
    if (!MaybeFlush()) return false;
  }
  return true;
}

std::string ChromeTraceWriter::Finish() {
  buffer_.append("\n],\"displayTimeUnit\":\"ns\"}\n");
  return std::move(buffer_);
}

ChromeTraceResult RenderChromeTrace(const Trace& trace, const ChromeTraceOptions& options,
                                    const ChromeTraceSource& source) {
  ChromeTraceWriter writer(options);
  writer.Add(trace, source);
  ChromeTraceResult result;
  result.json = writer.Finish();
  result.events = writer.events();
  result.truncated = writer.truncated();
  return result;
}

}  // namespace opmap::analysis
