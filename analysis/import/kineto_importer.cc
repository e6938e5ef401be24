#include "analysis/import/kineto_importer.h"

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/import/decimal.h"
#include "analysis/import/gzip.h"
#include "analysis/import/kineto_event_stream.h"

namespace opmap::analysis {
namespace {

namespace od = simdjson::ondemand;

// What an event is, from its `cat`. 2021 traces use capitalised categories.
enum class Category {
  kIgnored, kKernel, kMemcpy, kMemset, kRuntime, kDriver, kCpuOp, kUserAnnotation,
  kPythonFunction,
};

Category CategoryOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return Category::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Category::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Category::kMemset;
  if (cat == "cuda_runtime" || cat == "Runtime") return Category::kRuntime;
  if (cat == "cuda_driver" || cat == "Driver") return Category::kDriver;
  if (cat == "cpu_op" || cat == "Operator") return Category::kCpuOp;
  if (cat == "user_annotation") return Category::kUserAnnotation;
  if (cat == "python_function") return Category::kPythonFunction;
  return Category::kIgnored;
}

bool IsGpu(Category c) {
  return c == Category::kKernel || c == Category::kMemcpy || c == Category::kMemset;
}

// The fields of one event we care about, captured in whatever order they appear.
struct RawEvent {
  std::string_view ph, cat, name_token, ts, dur;
  int64_t pid = kNone, tid = kNone;
  std::string_view tid_text;  // non-numeric tid ("stream 7", "PyTorch Profiler")
  bool pid_numeric = false;
  int64_t external_id = kNone, correlation = kNone, device = kNone, stream = kNone;
  int64_t registers = -1, shared_memory = kNone, bytes = kNone;
  std::array<int32_t, 3> grid = {0, 0, 0}, block = {0, 0, 0};
  std::string_view input_dims, input_types, concrete_inputs, input_strides;
  std::string_view kernel_token;  // raw JSON token of args "kernel" (launch calls)
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                        s.back() == '\t' || s.back() == ',' )) {
    s.remove_suffix(1);
  }
  return s;
}

// Strips the quotes of a raw string token; returns false when it holds escapes.
bool UnquotePlain(std::string_view token, std::string_view* out) {
  token = Trim(token);
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  token = token.substr(1, token.size() - 2);
  if (token.find('\\') != std::string_view::npos) return false;
  *out = token;
  return true;
}

bool ParseIntText(std::string_view s, int64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// Reads an integer that may be written as a number (int or float) or a numeric string
// (ROCm writes "0x0"). Leaves `out` untouched when the value is something else.
void ReadLooseInt(od::value v, int64_t* out) {
  od::json_type type;
  if (v.type().get(type)) return;
  if (type == od::json_type::number) {
    std::string_view tok = Trim(v.raw_json_token());
    int64_t i;
    if (ParseIntText(tok, &i)) {
      *out = i;
      return;
    }
    double d;
    // Out-of-range doubles (e.g. "pid": 2e77) don't convert: casting them is undefined
    // behaviour (found by the fuzzer), so they leave `out` unset like any other junk.
    if (!v.get_double().get(d) && d >= -0x1p63 && d < 0x1p63) *out = static_cast<int64_t>(d);
  } else if (type == od::json_type::string) {
    std::string_view s;
    if (!v.get_string().get(s)) {
      int64_t i;
      if (ParseIntText(s, &i)) *out = i;
    }
  }
}

void ReadDim3(od::value v, std::array<int32_t, 3>* out) {
  od::array arr;
  if (v.get_array().get(arr)) return;
  size_t k = 0;
  for (auto elem : arr) {
    int64_t x;
    if (elem.get_int64().get(x) || k >= 3) return;
    (*out)[k++] = static_cast<int32_t>(x);
  }
}

// The raw JSON text of an array argument (Input Dims, Input type, ...), kept for the
// roofline's parsers; left empty when the value is not an array.
void ReadRawArray(od::value v, std::string_view* out) {
  od::array arr;
  if (v.get_array().get(arr)) return;
  std::string_view raw;
  if (!arr.raw_json().get(raw)) *out = Trim(raw);
}

simdjson::error_code ReadArgs(od::value v, RawEvent* ev) {
  od::object args;
  if (auto err = v.get_object().get(args)) return err;
  for (auto field_result : args) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return err;
    od::raw_json_string key = field.key();
    od::value val = field.value();
    if (key == "External id" || key == "external id") {
      ReadLooseInt(val, &ev->external_id);
    } else if (key == "correlation") {
      ReadLooseInt(val, &ev->correlation);
    } else if (key == "device") {
      ReadLooseInt(val, &ev->device);
    } else if (key == "stream") {
      ReadLooseInt(val, &ev->stream);
    } else if (key == "registers per thread") {
      ReadLooseInt(val, &ev->registers);
    } else if (key == "shared memory") {
      ReadLooseInt(val, &ev->shared_memory);
    } else if (key == "bytes") {
      ReadLooseInt(val, &ev->bytes);
    } else if (key == "grid") {
      ReadDim3(val, &ev->grid);
    } else if (key == "block") {
      ReadDim3(val, &ev->block);
    } else if (key == "kernel") {
      ev->kernel_token = val.raw_json_token();
    } else if (key == "Input Dims") {
      ReadRawArray(val, &ev->input_dims);
    } else if (key == "Input type") {
      ReadRawArray(val, &ev->input_types);
    } else if (key == "Concrete Inputs") {
      ReadRawArray(val, &ev->concrete_inputs);
    } else if (key == "Input Strides") {
      ReadRawArray(val, &ev->input_strides);
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ReadEvent(od::object obj, RawEvent* ev) {
  for (auto field_result : obj) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return err;
    od::raw_json_string key = field.key();
    od::value val = field.value();
    if (key == "ph") {
      if (auto err = val.get_string().get(ev->ph)) return err;
    } else if (key == "cat") {
      if (auto err = val.get_string().get(ev->cat)) return err;
    } else if (key == "name") {
      ev->name_token = val.raw_json_token();
    } else if (key == "ts") {
      ev->ts = Trim(val.raw_json_token());
    } else if (key == "dur") {
      ev->dur = Trim(val.raw_json_token());
    } else if (key == "pid") {
      int64_t pid = kNone;
      ReadLooseInt(val, &pid);
      ev->pid = pid;
      ev->pid_numeric = pid != kNone;
    } else if (key == "tid") {
      od::json_type type;
      if (auto err = val.type().get(type)) return err;
      if (type == od::json_type::string) {
        if (auto err = val.get_string().get(ev->tid_text)) return err;
        int64_t t;
        if (ParseIntText(ev->tid_text, &t)) ev->tid = t;
      } else {
        ReadLooseInt(val, &ev->tid);
      }
    } else if (key == "args") {
      od::json_type type;
      if (auto err = val.type().get(type)) return err;
      if (type == od::json_type::object) {
        if (auto err = ReadArgs(val, ev)) return err;
      }
    }
  }
  return simdjson::SUCCESS;
}

// What a Kineto deviceProperties entry says of a GPU besides its name.
struct DeviceFacts {
  int64_t major = kNone, minor = kNone, warp_size = kNone, units = kNone, memory_bytes = kNone;
};

// A GPU whose trace gives no name, by its architecture, wave width, compute units and
// memory; "" when no row fits. The name says it was identified, and from what, so a
// report never passes a guess off as the device's own word (docs/metrics.md).
std::string IdentifyGpu(const DeviceFacts& f) {
  struct Row {
    int64_t major, minor, warp_size, units, memory_gib_min, memory_gib_max;
    const char* name;
  };
  // gfx942 (CDNA 3): MI300X 304 CUs / 192 GB, MI325X 304 CUs / 256 GB, MI300A 228 CUs.
  static constexpr Row kRows[] = {
      {9, 4, 64, 304, 176, 200, "AMD Instinct MI300X"},
      {9, 4, 64, 304, 240, 264, "AMD Instinct MI325X"},
  };
  const int64_t gib = f.memory_bytes > 0 ? f.memory_bytes >> 30 : -1;
  for (const Row& r : kRows) {
    if (f.major == r.major && f.minor == r.minor && f.warp_size == r.warp_size &&
        f.units == r.units && gib >= r.memory_gib_min && gib <= r.memory_gib_max) {
      return absl::StrFormat(
          "%s (identified from deviceProperties: compute %d.%d, warp size %d, %d compute "
          "units, %d GiB; the trace names no device)",
          r.name, f.major, f.minor, f.warp_size, f.units, gib);
    }
  }
  return "";
}

class Importer : public KinetoEventSink {
 public:
  explicit Importer(EventConsumer* consumer = nullptr, bool allow_no_gpu_events = false)
      : consumer_(consumer), allow_no_gpu_events_(allow_no_gpu_events) {
    trace_.info.format = "kineto-json";
  }

  simdjson::error_code OnEvent(od::object& event, size_t index, absl::Status* status) override {
    event_index_ = index;
    if (consumer_ != nullptr) {
      if (!started_) {
        started_ = true;
        consumer_->OnStart(trace_.info, &trace_.strings);
      }
      if (consumer_->Cancelled()) {
        *status = absl::CancelledError("the import was cancelled");
        return simdjson::SUCCESS;
      }
    }
    RawEvent ev;
    if (auto err = ReadEvent(event, &ev)) return err;
    *status = AddEvent(ev);
    return simdjson::SUCCESS;
  }

  void OnDeviceProperties(od::document& doc) override {
    od::array arr;
    if (doc.get_array().get(arr)) return;
    for (auto elem : arr) {
      od::object obj;
      if (elem.get_object().get(obj)) return;
      std::string_view name;
      if (obj.find_field_unordered("name").get_string().get(name)) continue;
      if (name.empty()) {
        // Some ROCm builds write no device name: identify it from what they do write.
        DeviceFacts facts;
        auto read = [&](const char* key, int64_t* out) {
          od::value v;
          if (!obj.find_field_unordered(key).get(v)) ReadLooseInt(v, out);
        };
        read("computeMajor", &facts.major);
        read("computeMinor", &facts.minor);
        read("warpSize", &facts.warp_size);
        read("numSms", &facts.units);
        read("totalGlobalMem", &facts.memory_bytes);
        std::string identified = IdentifyGpu(facts);
        if (!identified.empty()) {
          trace_.info.gpu_names.push_back(std::move(identified));
          continue;
        }
      }
      trace_.info.gpu_names.emplace_back(name);
    }
  }

  absl::StatusOr<Trace> Finish(absl::StatusOr<KinetoStreamResult> streamed) {
    if (!streamed.ok()) return streamed.status();
    if (!streamed->saw_events) {
      return absl::InvalidArgumentError(
          "invalid trace: no \"traceEvents\" array in the top-level object");
    }
    if (gpu_events_ == 0 && !allow_no_gpu_events_) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "empty trace: %d events but no GPU events (kernel, gpu_memcpy, gpu_memset)",
          streamed->events));
    }
    if (consumer_ != nullptr) consumer_->OnFinish();
    return std::move(trace_);
  }

 private:
  absl::Status EventError(const RawEvent& ev, std::string_view what) const {
    std::string_view name;
    if (!UnquotePlain(ev.name_token, &name)) name = ev.name_token;
    if (name.size() > 80) name = name.substr(0, 80);
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid event traceEvents[%d] (cat \"%s\", name \"%s\"): %s", event_index_, ev.cat,
        name, what));
  }

  // SGLang's kernel shape profiler names its operators `sglang_profiler::<op>_<N>`, N a
  // per-run id: the operator is the name without it (as TraceLens reads it), so that one
  // operator is one row across captures and runs.
  StringId WithoutVolatileSuffix(StringId id) {
    std::string_view name = trace_.strings.Get(id);
    constexpr std::string_view kPrefix = "sglang_profiler::";
    if (!name.starts_with(kPrefix)) return id;
    size_t end = name.size();
    while (end > kPrefix.size() && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    if (end == name.size() || end <= kPrefix.size() + 1 || name[end - 1] != '_') return id;
    return trace_.strings.Intern(name.substr(0, end - 1));
  }

  absl::StatusOr<StringId> InternName(const RawEvent& ev) {
    return InternString(ev, ev.name_token, "name");
  }

  // A string field's raw JSON token, interned; plain tokens without a copy.
  absl::StatusOr<StringId> InternString(const RawEvent& ev, std::string_view token,
                                        std::string_view field) {
    std::string_view plain;
    if (UnquotePlain(token, &plain)) return trace_.strings.Intern(plain);
    // Rare: escapes in the string. Unescape with a tiny parse of the token alone.
    std::string_view tok = Trim(token);
    if (tok.empty()) return EventError(ev, absl::StrFormat("missing field \"%s\"", field));
    simdjson::padded_string padded(tok);
    od::parser p;
    od::document d;
    std::string_view s;
    if (p.iterate(padded).get(d) || d.get_string().get(s)) {
      return EventError(ev, absl::StrFormat("field \"%s\" is not a string", field));
    }
    return trace_.strings.Intern(s);
  }

  absl::StatusOr<int64_t> Micros(const RawEvent& ev, std::string_view text,
                                 std::string_view field) {
    if (text.empty()) return EventError(ev, absl::StrFormat("missing field \"%s\"", field));
    std::string_view t = text;
    if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
    std::optional<int64_t> ns = MicrosTextToNanos(t);
    if (!ns) {
      return EventError(ev, absl::StrFormat("field \"%s\" is not a number: %s", field, text));
    }
    return *ns;
  }

  int64_t ThreadOf(const RawEvent& ev) {
    if (ev.tid != kNone) return ev.tid;
    if (ev.tid_text.empty()) return kNone;
    // Non-numeric thread names get a stable id of their own, far from real tids.
    return -1000 - static_cast<int64_t>(trace_.strings.Intern(ev.tid_text));
  }

  absl::Status AddEvent(const RawEvent& ev) {
    if (ev.ph != "X") return absl::OkStatus();
    Category cat = CategoryOf(ev.cat);
    if (cat == Category::kIgnored) return absl::OkStatus();
    ASSIGN_OR_RETURN(int64_t start, Micros(ev, ev.ts, "ts"));
    ASSIGN_OR_RETURN(int64_t dur, Micros(ev, ev.dur, "dur"));
    if (dur < 0) return EventError(ev, absl::StrFormat("negative duration: dur = %s", ev.dur));
    // The bounds every source keeps (model/trace.h), so that no end or difference of two
    // times overflows downstream.
    if (start < -kMaxTimestampNs || start > kMaxTimestampNs) {
      return EventError(ev, absl::StrFormat("field \"ts\" is out of range (|ts| > 2^62 ns): %s", ev.ts));
    }
    if (dur > kMaxDurationNs) {
      return EventError(ev, absl::StrFormat("field \"dur\" is out of range (> 2^52 ns): %s", ev.dur));
    }
    ASSIGN_OR_RETURN(StringId name, InternName(ev));
    if (cat == Category::kCpuOp) name = WithoutVolatileSuffix(name);
    if (IsGpu(cat)) {
      GpuEvent g;
      g.start_ns = start;
      g.dur_ns = dur;
      g.name = name;
      g.kind = cat == Category::kKernel   ? GpuEventKind::kKernel
               : cat == Category::kMemcpy ? GpuEventKind::kMemcpy
                                          : GpuEventKind::kMemset;
      g.device = static_cast<int32_t>(ev.device != kNone ? ev.device : ev.pid);
      if (ev.device == kNone && !ev.pid_numeric) {
        return EventError(ev, "missing field \"args.device\" (and pid is not numeric)");
      }
      g.stream = ev.stream != kNone ? ev.stream : ev.tid;
      if (g.stream == kNone) {
        // 2021 traces name the stream in the tid: "stream 7".
        int64_t s;
        if (ev.tid_text.rfind("stream ", 0) == 0 && ParseIntText(ev.tid_text.substr(7), &s)) {
          g.stream = s;
        } else {
          return EventError(ev, "missing field \"args.stream\"");
        }
      }
      g.correlation = ev.correlation;
      g.external_id = ev.external_id;
      g.grid = ev.grid;
      g.block = ev.block;
      g.registers_per_thread = static_cast<int32_t>(ev.registers);
      g.shared_memory_bytes = ev.shared_memory;
      g.bytes = ev.bytes;
      ++gpu_events_;
      if (consumer_ != nullptr) {
        consumer_->OnGpuEvent(g);
      } else {
        trace_.gpu_events.push_back(g);
      }
    } else if (cat == Category::kRuntime || cat == Category::kDriver) {
      ApiCall a;
      a.start_ns = start;
      a.dur_ns = dur;
      a.name = name;
      a.kind = cat == Category::kRuntime ? ApiKind::kRuntime : ApiKind::kDriver;
      a.process = ev.pid;
      a.thread = ThreadOf(ev);
      a.correlation = ev.correlation;
      a.external_id = ev.external_id;
      if (!ev.kernel_token.empty()) {
        // A kernel name that is not a string names nothing: the call stays unnamed.
        absl::StatusOr<StringId> kernel = InternString(ev, ev.kernel_token, "args.kernel");
        if (kernel.ok()) a.kernel = *kernel;
      }
      if (trace_.info.process == kNone) trace_.info.process = ev.pid;
      if (consumer_ != nullptr) {
        consumer_->OnApiCall(a);
      } else {
        trace_.api_calls.push_back(a);
      }
    } else {
      Range r;
      r.start_ns = start;
      r.dur_ns = dur;
      r.name = name;
      r.kind = cat == Category::kCpuOp            ? RangeKind::kCpuOp
               : cat == Category::kUserAnnotation ? RangeKind::kUserAnnotation
                                                  : RangeKind::kPythonFunction;
      r.process = ev.pid;
      r.thread = ThreadOf(ev);
      r.external_id = ev.external_id;
      if (!ev.input_dims.empty()) r.input_dims = trace_.strings.Intern(ev.input_dims);
      if (!ev.input_types.empty()) r.input_types = trace_.strings.Intern(ev.input_types);
      if (!ev.concrete_inputs.empty()) {
        r.concrete_inputs = trace_.strings.Intern(ev.concrete_inputs);
      }
      if (!ev.input_strides.empty()) r.input_strides = trace_.strings.Intern(ev.input_strides);
      if (consumer_ != nullptr) {
        consumer_->OnRange(r);
      } else {
        trace_.ranges.push_back(r);
      }
    }
    return absl::OkStatus();
  }

  EventConsumer* consumer_;
  bool allow_no_gpu_events_;
  Trace trace_;
  size_t event_index_ = 0;
  int64_t gpu_events_ = 0;
  bool started_ = false;
};

}  // namespace

size_t KinetoRequiredPadding() { return KinetoStreamPadding(); }

absl::StatusOr<Trace> ImportKinetoJson(std::string& json, const KinetoImportOptions& options) {
  Importer importer(nullptr, options.allow_no_gpu_events);
  return importer.Finish(StreamKinetoJson(json, importer, options.progress));
}

absl::StatusOr<Trace> ImportKinetoBytes(std::string bytes, const KinetoImportOptions& options) {
  if (LooksGzipped(bytes)) {
    Importer importer(nullptr, options.allow_no_gpu_events);
    return importer.Finish(StreamKinetoGzip(bytes, importer, options.progress));
  }
  return ImportKinetoJson(bytes, options);
}

absl::StatusOr<Trace> ImportKinetoEvents(KinetoTextSource& text, EventConsumer& consumer,
                                         const KinetoImportOptions& options) {
  Importer importer(&consumer, options.allow_no_gpu_events);
  return importer.Finish(StreamKinetoText(text, importer, options.progress));
}

}  // namespace opmap::analysis
