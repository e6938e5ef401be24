#include "analysis/import/capture_trace.h"

#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_format.h"
#include "abi/ring_records.h"
#include "analysis/import/cuda_names.h"
#include "analysis/import/nvtx_names.h"

namespace opmap::analysis {
namespace {


// The fixed part of a record, copied out (the record may be unaligned in a file).
template <typename T>
T Fixed(std::string_view record) {
  T out;
  std::memcpy(static_cast<void*>(&out), record.data(), sizeof(T));
  return out;
}

int64_t OrNone(uint64_t v) { return v == 0 ? kNone : static_cast<int64_t>(v); }

// An NVTX payload that can be a request id: an integer in [0, 2^63); anything else none.
int64_t IntegerPayload(uint8_t kind, uint64_t bits) {
  switch (kind) {
    case ring::kPayloadUint64:
    case ring::kPayloadUint32:
      return bits < (uint64_t{1} << 63) ? static_cast<int64_t>(bits) : kNone;
    case ring::kPayloadInt64:
    case ring::kPayloadInt32: {
      const int64_t v = static_cast<int64_t>(bits);
      return v >= 0 ? v : kNone;
    }
    default:
      return kNone;
  }
}

// Producer-written timestamps are hostile: within ±2^62 ns, end >= start and at most
// 2^52 ns apart (analysis/model/trace.h), so that end - start cannot overflow and the
// collector never rejects a whole batch for one event the agent could have refused.
bool ValidSpan(int64_t start_ns, int64_t end_ns) {
  return start_ns >= -kMaxTimestampNs && start_ns <= kMaxTimestampNs &&
         end_ns >= start_ns && end_ns <= kMaxTimestampNs &&
         end_ns - start_ns <= kMaxDurationNs;
}

// MemcpyRecord and MemsetRecord share their leading fields (abi/ring_records.h).
template <typename R>
GpuEvent MemoryEvent(const R& r, GpuEventKind kind) {
  GpuEvent e;
  e.kind = kind;
  e.start_ns = r.start_ns;
  // -1 marks a span that is not valid (the caller refuses it) without overflowing.
  e.dur_ns = ValidSpan(r.start_ns, r.end_ns) ? r.end_ns - r.start_ns : -1;
  e.bytes = static_cast<int64_t>(r.bytes);
  e.correlation = OrNone(r.correlation_id);
  e.graph_id = OrNone(r.graph_id);
  e.graph_node_id = OrNone(r.graph_node_id);
  e.device = static_cast<int32_t>(r.device_id);
  e.stream = r.stream_id;
  return e;
}

}  // namespace

CaptureTraceBuilder::CaptureTraceBuilder(int64_t pid) : pid_(pid), graphs_(pid) {
  result_.trace.info.format = "opmap-capture";
  result_.trace.info.process = pid;
}

void CaptureTraceBuilder::Bad(std::string reason) {
  if (result_.bad_records++ == 0) result_.first_bad_record = std::move(reason);
}

bool CaptureTraceBuilder::Inline(std::string_view record, uint32_t fixed, uint32_t offset,
                                 uint32_t len, std::string_view* out) {
  if (static_cast<uint64_t>(fixed) + offset + len > record.size()) {
    Bad(absl::StrFormat("record %d: inline string of %d bytes overruns the record (%d bytes)",
                        result_.records, len, record.size()));
    return false;
  }
  *out = record.substr(fixed + offset, len);
  return true;
}

StringId CaptureTraceBuilder::KernelName(std::string_view mangled) {
  auto it = kernel_names_.find(absl::string_view(mangled.data(), mangled.size()));
  if (it != kernel_names_.end()) return it->second;
  StringId id = result_.trace.strings.Intern(DemangleKernelName(mangled));
  kernel_names_.emplace(std::string(mangled), id);
  return id;
}

void CaptureTraceBuilder::Add(std::string_view record) {
  using namespace opmap::ring;  // NOLINT: the record vocabulary
  ++result_.records;
  if (record.size() < sizeof(RecordHeader)) {
    Bad(absl::StrFormat("record %d: %d bytes, shorter than a header", result_.records,
                        record.size()));
    return;
  }
  uint16_t type;
  std::memcpy(&type, record.data() + 4, sizeof(type));
  const uint32_t fixed = FixedSize(type);
  if (type == kPadding || fixed == 0) return;  // nothing, or a newer library's type
  if (record.size() < fixed) {
    Bad(absl::StrFormat("record %d: type %d needs %d bytes, has %d", result_.records, type,
                        fixed, record.size()));
    return;
  }
  Trace& t = result_.trace;
  std::string_view name;
  switch (type) {
    case kRange: {
      const auto r = Fixed<RangeRecord>(record);
      if (!Inline(record, fixed, 0, r.name_len, &name)) return;
      if (!ValidSpan(r.start_ns, r.end_ns)) {
        Bad(absl::StrFormat("record %d: NVTX range ends before it starts or out of range",
                            result_.records));
        return;
      }
      Range range;
      range.start_ns = r.start_ns;
      range.dur_ns = r.end_ns - r.start_ns;
      if (!NameNvtxRange(name, t.strings, range)) {
        ++result_.output_markers;
        return;
      }
      range.kind = RangeKind::kNvtx;
      range.process = pid_;
      range.thread = r.tid;
      range.payload = IntegerPayload(r.payload_kind, r.payload);
      t.ranges.push_back(range);
      return;
    }
    case kRangeStart: {
      const auto r = Fixed<RangeStartRecord>(record);
      if (!Inline(record, fixed, 0, r.name_len, &name)) return;
      if (starts_.size() >= kMaxOpenRanges && !starts_.contains(r.range_id)) {
        Bad(absl::StrFormat("record %d: more than %d NVTX ranges open at once",
                            result_.records, kMaxOpenRanges));
        return;
      }
      Range p;
      p.start_ns = r.start_ns;
      p.thread = r.tid;  // where it started, as Nsight Systems shows it
      p.payload = IntegerPayload(r.payload_kind, r.payload);
      // An output marker is held too (named nothing), so its end is not an unmatched one.
      if (!NameNvtxRange(name, t.strings, p)) p.name = kOutputMarker;
      starts_[r.range_id] = p;
      return;
    }
    case kRangeEnd: {
      const auto r = Fixed<RangeEndRecord>(record);
      auto it = starts_.find(r.range_id);
      if (it == starts_.end()) {
        ++result_.unmatched_ends;
        return;
      }
      Range range = it->second;
      starts_.erase(it);
      if (range.name == kOutputMarker) {
        ++result_.output_markers;
        return;
      }
      if (!ValidSpan(range.start_ns, r.end_ns)) {
        Bad(absl::StrFormat("record %d: NVTX range %d ends before it starts", result_.records,
                            r.range_id));
        return;
      }
      range.dur_ns = r.end_ns - range.start_ns;
      range.kind = RangeKind::kNvtx;
      range.process = pid_;
      t.ranges.push_back(range);
      return;
    }
    case kDomain: {
      const auto r = Fixed<DomainRecord>(record);
      if (!Inline(record, fixed, 0, r.name_len, &name)) return;
      if (result_.domains.size() >= kMaxDomains && !result_.domains.contains(r.domain_id)) {
        Bad(absl::StrFormat("record %d: more than %d NVTX domains", result_.records, kMaxDomains));
        return;
      }
      result_.domains[r.domain_id] = std::string(name);
      return;
    }
    case kKernel: {
      const auto r = Fixed<KernelRecord>(record);
      if (!Inline(record, fixed, 0, r.name_len, &name)) return;
      if (!ValidSpan(r.start_ns, r.end_ns)) {
        Bad(absl::StrFormat("record %d: kernel ends before it starts or out of range",
                            result_.records));
        return;
      }
      GpuEvent e;
      e.start_ns = r.start_ns;
      e.dur_ns = r.end_ns - r.start_ns;
      e.name = KernelName(name);
      e.kind = GpuEventKind::kKernel;
      e.device = static_cast<int32_t>(r.device_id);
      e.stream = r.stream_id;
      e.process = pid_;
      e.correlation = OrNone(r.correlation_id);
      e.graph_id = OrNone(r.graph_id);
      e.graph_node_id = OrNone(r.graph_node_id);
      e.grid = {r.grid_x, r.grid_y, r.grid_z};
      e.block = {r.block_x, r.block_y, r.block_z};
      e.registers_per_thread = r.registers_per_thread;
      e.shared_memory_bytes =
          static_cast<int64_t>(r.static_shared_bytes) + r.dynamic_shared_bytes;
      AddGpuEvent(e);
      return;
    }
    case kMemcpy:
    case kMemset: {
      GpuEvent e;
      std::string label;
      if (type == kMemcpy) {
        const auto r = Fixed<MemcpyRecord>(record);
        e = MemoryEvent(r, GpuEventKind::kMemcpy);
        label = MemcpyName(r.copy_kind, r.src_kind, r.dst_kind);
      } else {
        const auto r = Fixed<MemsetRecord>(record);
        e = MemoryEvent(r, GpuEventKind::kMemset);
        label = MemsetName(r.memory_kind);
      }
      if (e.dur_ns < 0) {
        Bad(absl::StrFormat("record %d: memory operation ends before it starts or out of "
                            "range",
                            result_.records));
        return;
      }
      e.process = pid_;
      e.name = t.strings.Intern(label);
      AddGpuEvent(e);
      return;
    }
    case kApi: {
      const auto r = Fixed<ApiRecord>(record);
      if (!Inline(record, fixed, 0, r.name_len, &name)) return;
      if (!ValidSpan(r.start_ns, r.end_ns)) {
        Bad(absl::StrFormat("record %d: API call ends before it starts or out of range",
                            result_.records));
        return;
      }
      ApiCall a;
      a.start_ns = r.start_ns;
      a.dur_ns = r.end_ns - r.start_ns;
      a.name = t.strings.Intern(name);
      a.kind = r.domain == kApiDriver ? ApiKind::kDriver : ApiKind::kRuntime;
      a.process = pid_;
      a.thread = r.tid;
      a.correlation = OrNone(r.correlation_id);
      t.api_calls.push_back(a);
      graphs_.AddCall(a, t);
      return;
    }
    case kExternalCorrelation: {
      const auto r = Fixed<ExternalCorrelationRecord>(record);
      if (r.correlation_id != 0) {
        if (external_ids_.size() >= kMaxExternalIds && !external_ids_.contains(r.correlation_id)) {
          Bad(absl::StrFormat("record %d: more than %d external correlations in one window",
                              result_.records, kMaxExternalIds));
          return;
        }
        external_ids_[r.correlation_id] = static_cast<int64_t>(r.external_id);
      }
      return;
    }
    case kStall: {
      const auto r = Fixed<StallRecord>(record);
      std::string_view function, reason;
      if (!Inline(record, fixed, 0, r.function_len, &function)) return;
      if (!Inline(record, fixed, r.function_len, r.reason_len, &reason)) return;
      // A count a double cannot hold exactly (no PC sampler gets near 2^53) is the
      // producer's garbage; the batch encoder would refuse the whole window for it.
      if (r.samples > (uint64_t{1} << std::numeric_limits<double>::digits)) {
        Bad(absl::StrFormat("record %d: stall sample count %d is out of range",
                            result_.records, r.samples));
        return;
      }
      StallSample& st = t.stalls.emplace_back();
      st.function = KernelName(function);
      st.reason = t.strings.Intern(reason);
      st.device = static_cast<int32_t>(r.device_id);
      st.unit = StallUnit::kSamples;
      st.value = static_cast<double>(r.samples);
      return;
    }
    case kStatus: {
      const auto r = Fixed<StatusRecord>(record);
      if (!Inline(record, fixed, 0, r.message_len, &name)) return;
      if (result_.statuses.size() >= kMaxStatuses) {
        Bad(absl::StrFormat("record %d: more than %d status records", result_.records,
                            kMaxStatuses));
        return;
      }
      result_.statuses.push_back(CaptureStatus{r.component, r.code, r.time_ns, std::string(name)});
      return;
    }
    case kWindow: {
      const auto r = Fixed<WindowRecord>(record);
      // Indexed, not searched: a producer writing 100k marks cost 2 s of a linear scan.
      auto [it, added] = window_index_.try_emplace(r.window_id, result_.windows.size());
      if (added) {
        if (result_.windows.size() >= kMaxWindows) {
          window_index_.erase(it);
          Bad(absl::StrFormat("record %d: more than %d capture windows", result_.records,
                              kMaxWindows));
          return;
        }
        result_.windows.emplace_back().window_id = r.window_id;
      }
      CaptureWindow& w = result_.windows[it->second];
      (r.mark == kWindowEnd ? w.end_ns : w.begin_ns) = r.time_ns;
      return;
    }
    case kGraphNode: {
      std::string why;
      if (!graphs_.AddNode(record, t, &why)) {
        Bad(absl::StrFormat("record %d: %s", result_.records, why));
      }
      return;
    }
    default:
      return;
  }
}

void CaptureTraceBuilder::AddGpuEvent(const GpuEvent& e) {
  if (e.graph_node_id == kNone) {
    result_.trace.gpu_events.push_back(e);
  } else {
    graphs_.AddEvent(e, result_.trace);
  }
}

void CaptureTraceBuilder::ApplyExternalIds() {
  if (external_ids_.empty()) return;
  for (ApiCall& a : result_.trace.api_calls) {
    if (auto it = external_ids_.find(a.correlation); it != external_ids_.end()) {
      a.external_id = it->second;
    }
  }
  for (GpuEvent& e : result_.trace.gpu_events) {
    if (auto it = external_ids_.find(e.correlation); it != external_ids_.end()) {
      e.external_id = it->second;
    }
  }
}

CaptureResult CaptureTraceBuilder::Finish() && {
  result_.open_ranges = static_cast<int64_t>(starts_.size());
  graphs_.Flush(result_.trace);
  result_.graph_nodes = graphs_.counts();
  ApplyExternalIds();
  return std::move(result_);
}

Trace CaptureTraceBuilder::TakeCompleted() {
  ApplyExternalIds();
  Trace chunk;
  chunk.info = result_.trace.info;
  chunk.gpu_events = std::exchange(result_.trace.gpu_events, {});
  chunk.api_calls = std::exchange(result_.trace.api_calls, {});
  chunk.ranges = std::exchange(result_.trace.ranges, {});
  return chunk;
}

}  // namespace opmap::analysis
