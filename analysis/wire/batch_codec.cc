// TraceToBatches: Trace -> wire Batches. Value conventions: wire_conventions.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "analysis/wire/batch_codec.h"
#include "analysis/wire/wire_conventions.h"

namespace opmap::analysis {
namespace {

namespace w = wire_internal;
using Rows = absl::Span<const uint32_t>;

constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// ---- Values the wire cannot carry unchanged: refuse them rather than alias them. ----

// `value` must be kNone (when `none_ok`) or within [lo, hi].
absl::Status CheckFits(int64_t value, bool none_ok, int64_t lo, int64_t hi,
                       const char* records, size_t index, const char* field,
                       const char* wire_type) {
  if ((none_ok && value == kNone) || (value >= lo && value <= hi)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s[%d].%s: %d does not fit the wire's %s", records, index, field, value, wire_type));
}

absl::Status CheckTrace(const Trace& trace) {
  // Ids of 0 pass and read back as "none": 0 is what CUPTI and Kineto mean by it (Kineto
  // writes "External id": 0 on some launches), and the wire's "none" too.
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    const char* r = "gpu_events";
    absl::Status s = CheckFits(g.correlation, true, 0, kUint32Max, r, i, "correlation",
                               "uint32");
    if (s.ok()) s = CheckFits(g.external_id, true, 0, kInt64Max, r, i, "external_id",
                              "uint64");
    if (s.ok()) s = CheckFits(g.graph_id, true, 0, kUint32Max, r, i, "graph_id",
                              "uint32");
    if (s.ok()) s = CheckFits(g.graph_node_id, true, 0, kInt64Max, r, i, "graph_node_id",
                              "uint64");
    if (s.ok()) s = CheckFits(g.stream, false, 0, kUint32Max, r, i, "stream", "uint32");
    if (s.ok()) s = CheckFits(g.shared_memory_bytes, true, 0, kUint32Max, r, i,
                              "shared_memory_bytes", "uint32");
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    const ApiCall& a = trace.api_calls[i];
    const char* r = "api_calls";
    absl::Status s = CheckFits(a.correlation, true, 0, kUint32Max, r, i, "correlation",
                               "uint32");
    if (s.ok()) s = CheckFits(a.external_id, true, 0, kInt64Max, r, i, "external_id",
                              "uint64");
    if (s.ok()) s = CheckFits(a.process, true, kInt32Min, kInt32Max, r, i, "process", "pid");
    if (s.ok()) s = CheckFits(a.thread, true, kInt32Min, kInt32Max, r, i, "thread", "tid");
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < trace.stalls.size(); ++i) {
    const StallSample& st = trace.stalls[i];
    // Counts a double holds exactly (up to 2^53), so the cast to the wire's uint64 is
    // defined and exact.
    constexpr double kMaxCount = double(uint64_t{1} << std::numeric_limits<double>::digits);
    if (st.unit != StallUnit::kSamples || !(st.value >= 0 && st.value <= kMaxCount) ||
        st.value != std::floor(st.value)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "stalls[%d].value: %g is not a sample count of at most 2^53 (the wire carries "
          "PC-sampling counts as uint64, not per-issue ratios)", i, st.value));
    }
    absl::Status s = CheckFits(st.device, false, 0, kUint32Max, "stalls", i, "device", "uint32");
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& g = trace.ranges[i];
    const char* r = "ranges";
    absl::Status s = CheckFits(g.external_id, true, 0, kInt64Max, r, i, "external_id",
                               "uint64");
    if (s.ok()) s = CheckFits(g.process, true, kInt32Min, kInt32Max, r, i, "process", "pid");
    if (s.ok()) s = CheckFits(g.thread, true, kInt32Min, kInt32Max, r, i, "thread", "tid");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---- The session's string table, sent as deltas. ----

}  // namespace

namespace wire_internal {

class StringEncoder {
 public:
  explicit StringEncoder(const StringTable& strings)
      : strings_(&strings), wire_id_(strings.size(), 0) {}
  void Rebind(const StringTable& strings) { strings_ = &strings; }

  uint32_t size() const { return next_; }

  // The wire id of a model string; the first use in the session adds it to `delta`.
  uint32_t Encode(StringId id, opmap::v1::StringTableDelta* delta) {
    if (id == kEmptyString) return 0;  // "" is wire id 0 in every session
    // The table may have grown since the last chunk (a live window interns as it goes).
    if (id >= wire_id_.size()) wire_id_.resize(strings_->size(), 0);
    uint32_t& wire = wire_id_[id];
    if (wire == 0) {
      wire = next_++;
      std::string_view s = strings_->Get(id);
      delta->add_strings(s.data(), s.size());
    }
    return wire;
  }
  uint32_t Get(StringId id) const { return wire_id_[id]; }  // after Encode
  // The text of a model string: chunks carry ids of the session's table, not their own.
  std::string_view Text(StringId id) const { return strings_->Get(id); }

 private:
  const StringTable* strings_;
  std::vector<uint32_t> wire_id_;  // model id -> wire id; 0 = not sent yet (or "")
  uint32_t next_ = 1;              // id 0 ("") goes out with the first batch
};

}  // namespace wire_internal

namespace {

using wire_internal::StringEncoder;

// ---- Columns. ----

template <typename Field, typename F>
void Column(Field* column, Rows rows, F&& value) {
  column->Reserve(static_cast<int>(rows.size()));
  for (uint32_t i : rows) column->Add(value(i));
}

// An OPTIONAL column costs nothing when no row of the batch knows its value.
template <typename Field, typename Known, typename F>
void OptionalColumn(Field* column, Rows rows, Known&& known, F&& value) {
  if (std::none_of(rows.begin(), rows.end(), known)) return;
  Column(column, rows, value);
}

// GPU events' launching process: written only when some event of the batch has one (the
// model's kNone goes out as HostIdToWire(kNone) and comes back as kNone).
template <typename Field>
void GpuPidColumn(const Trace& trace, Rows rows, Field* column) {
  OptionalColumn(
      column, rows, [&](uint32_t i) { return trace.gpu_events[i].process != kNone; },
      [&](uint32_t i) { return w::HostIdToWire(trace.gpu_events[i].process); });
}

void EncodeKernels(const Trace& trace, Rows rows, const StringEncoder& strings,
                   opmap::v1::KernelColumns* k) {
  auto ev = [&](uint32_t i) -> const GpuEvent& { return trace.gpu_events[i]; };
  GpuPidColumn(trace, rows, k->mutable_pid());
  Column(k->mutable_start_ns(), rows, [&](uint32_t i) { return ev(i).start_ns; });
  Column(k->mutable_dur_ns(), rows, [&](uint32_t i) { return ev(i).dur_ns; });
  Column(k->mutable_name_id(), rows, [&](uint32_t i) { return strings.Get(ev(i).name); });
  Column(k->mutable_device(), rows, [&](uint32_t i) { return w::DeviceToWire(ev(i).device); });
  Column(k->mutable_stream(), rows,
         [&](uint32_t i) { return static_cast<uint32_t>(ev(i).stream); });
  OptionalColumn(
      k->mutable_correlation(), rows, [&](uint32_t i) { return ev(i).correlation != kNone; },
      [&](uint32_t i) { return static_cast<uint32_t>(w::IdToWire(ev(i).correlation)); });
  OptionalColumn(
      k->mutable_external_id(), rows, [&](uint32_t i) { return ev(i).external_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).external_id); });
  OptionalColumn(
      k->mutable_graph_id(), rows, [&](uint32_t i) { return ev(i).graph_id != kNone; },
      [&](uint32_t i) { return static_cast<uint32_t>(w::IdToWire(ev(i).graph_id)); });
  OptionalColumn(
      k->mutable_graph_node_id(), rows, [&](uint32_t i) { return ev(i).graph_node_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).graph_node_id); });
  google::protobuf::RepeatedField<uint32_t>* grid[3] = {
      k->mutable_grid_x(), k->mutable_grid_y(), k->mutable_grid_z()};
  google::protobuf::RepeatedField<uint32_t>* block[3] = {
      k->mutable_block_x(), k->mutable_block_y(), k->mutable_block_z()};
  for (int d = 0; d < 3; ++d) {
    OptionalColumn(
        grid[d], rows, [&](uint32_t i) { return ev(i).grid[d] != 0; },
        [&](uint32_t i) { return static_cast<uint32_t>(ev(i).grid[d]); });
    OptionalColumn(
        block[d], rows, [&](uint32_t i) { return ev(i).block[d] != 0; },
        [&](uint32_t i) { return static_cast<uint32_t>(ev(i).block[d]); });
  }
  OptionalColumn(
      k->mutable_registers_per_thread(), rows,
      [&](uint32_t i) { return ev(i).registers_per_thread >= 0; },
      [&](uint32_t i) { return w::RegistersToWire(ev(i).registers_per_thread); });
  OptionalColumn(
      k->mutable_static_shared_memory_bytes(), rows,
      [&](uint32_t i) { return ev(i).shared_memory_bytes != kNone; },
      [&](uint32_t i) { return static_cast<uint32_t>(w::BytesToWire(ev(i).shared_memory_bytes)); });
}

void EncodeMemoryOps(const Trace& trace, Rows rows, const StringEncoder& strings,
                     opmap::v1::MemoryOpColumns* m) {
  auto ev = [&](uint32_t i) -> const GpuEvent& { return trace.gpu_events[i]; };
  GpuPidColumn(trace, rows, m->mutable_pid());
  Column(m->mutable_kind(), rows, [&](uint32_t i) {
    return static_cast<int>(w::MemoryOpKindFor(ev(i).kind, strings.Text(ev(i).name)));
  });
  Column(m->mutable_start_ns(), rows, [&](uint32_t i) { return ev(i).start_ns; });
  Column(m->mutable_dur_ns(), rows, [&](uint32_t i) { return ev(i).dur_ns; });
  Column(m->mutable_bytes(), rows, [&](uint32_t i) { return w::BytesToWire(ev(i).bytes); });
  Column(m->mutable_device(), rows, [&](uint32_t i) { return w::DeviceToWire(ev(i).device); });
  Column(m->mutable_stream(), rows,
         [&](uint32_t i) { return static_cast<uint32_t>(ev(i).stream); });
  OptionalColumn(
      m->mutable_correlation(), rows, [&](uint32_t i) { return ev(i).correlation != kNone; },
      [&](uint32_t i) { return static_cast<uint32_t>(w::IdToWire(ev(i).correlation)); });
  OptionalColumn(
      m->mutable_external_id(), rows, [&](uint32_t i) { return ev(i).external_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).external_id); });
  OptionalColumn(
      m->mutable_graph_id(), rows, [&](uint32_t i) { return ev(i).graph_id != kNone; },
      [&](uint32_t i) { return static_cast<uint32_t>(w::IdToWire(ev(i).graph_id)); });
  OptionalColumn(
      m->mutable_graph_node_id(), rows, [&](uint32_t i) { return ev(i).graph_node_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).graph_node_id); });
  // Kineto names say "(Pageable -> Device)"; the live agent sets the flag from CUPTI.
  auto pageable = [&](uint32_t i) {
    return strings.Text(ev(i).name).find("Pageable") != std::string_view::npos;
  };
  OptionalColumn(m->mutable_host_pageable(), rows, pageable, pageable);
  OptionalColumn(
      m->mutable_name_id(), rows, [&](uint32_t i) { return ev(i).name != kEmptyString; },
      [&](uint32_t i) { return strings.Get(ev(i).name); });
}

// Sends a pid column only when some row differs from Resource.pid (its default).
template <typename Record, typename Field>
void PidColumn(const std::vector<Record>& records, Rows rows, uint32_t resource_pid,
               Field* column) {
  OptionalColumn(
      column, rows,
      [&](uint32_t i) { return w::HostIdToWire(records[i].process) != resource_pid; },
      [&](uint32_t i) { return w::HostIdToWire(records[i].process); });
}

void EncodeLaunches(const Trace& trace, Rows rows, const StringEncoder& strings,
                    uint32_t resource_pid, opmap::v1::LaunchApiColumns* l) {
  auto ev = [&](uint32_t i) -> const ApiCall& { return trace.api_calls[i]; };
  Column(l->mutable_start_ns(), rows, [&](uint32_t i) { return ev(i).start_ns; });
  Column(l->mutable_dur_ns(), rows, [&](uint32_t i) { return ev(i).dur_ns; });
  Column(l->mutable_name_id(), rows, [&](uint32_t i) { return strings.Get(ev(i).name); });
  Column(l->mutable_api_kind(), rows,
         [&](uint32_t i) { return static_cast<int>(w::ApiKindToWire(ev(i).kind)); });
  PidColumn(trace.api_calls, rows, resource_pid, l->mutable_pid());
  Column(l->mutable_tid(), rows, [&](uint32_t i) { return w::HostIdToWire(ev(i).thread); });
  Column(l->mutable_correlation(), rows,
         [&](uint32_t i) { return static_cast<uint32_t>(w::IdToWire(ev(i).correlation)); });
  OptionalColumn(
      l->mutable_external_id(), rows, [&](uint32_t i) { return ev(i).external_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).external_id); });
}

void EncodeRanges(const Trace& trace, Rows rows, const StringEncoder& strings,
                  uint32_t resource_pid, opmap::v1::RangeColumns* r) {
  auto ev = [&](uint32_t i) -> const Range& { return trace.ranges[i]; };
  Column(r->mutable_start_ns(), rows, [&](uint32_t i) { return ev(i).start_ns; });
  Column(r->mutable_dur_ns(), rows, [&](uint32_t i) { return ev(i).dur_ns; });
  Column(r->mutable_name_id(), rows, [&](uint32_t i) { return strings.Get(ev(i).name); });
  Column(r->mutable_kind(), rows,
         [&](uint32_t i) { return static_cast<int>(w::RangeKindToWire(ev(i).kind)); });
  PidColumn(trace.ranges, rows, resource_pid, r->mutable_pid());
  Column(r->mutable_tid(), rows, [&](uint32_t i) { return w::HostIdToWire(ev(i).thread); });
  OptionalColumn(
      r->mutable_external_id(), rows, [&](uint32_t i) { return ev(i).external_id != kNone; },
      [&](uint32_t i) { return w::IdToWire(ev(i).external_id); });
  OptionalColumn(
      r->mutable_input_dims_id(), rows,
      [&](uint32_t i) { return ev(i).input_dims != kEmptyString; },
      [&](uint32_t i) { return strings.Get(ev(i).input_dims); });
  OptionalColumn(
      r->mutable_payload(), rows, [&](uint32_t i) { return ev(i).payload != kNone; },
      [&](uint32_t i) { return w::PayloadToWire(ev(i).payload); });
}

// ---- Batching. ----

enum class RecordType : uint8_t { kGpuEvent = 0, kApiCall = 1, kRange = 2 };

struct RecordRef {
  int64_t start_ns;
  RecordType type;
  uint32_t index;
};

// Every record of the trace by start time. Ties keep the trace's order within a type, so
// the assembled trace lists records with identical extents in the original order (the
// mapper breaks such ties by index).
std::vector<RecordRef> RecordsByStart(const Trace& trace) {
  std::vector<RecordRef> refs;
  refs.reserve(trace.gpu_events.size() + trace.api_calls.size() + trace.ranges.size());
  for (uint32_t i = 0; i < trace.api_calls.size(); ++i) {
    refs.push_back({trace.api_calls[i].start_ns, RecordType::kApiCall, i});
  }
  for (uint32_t i = 0; i < trace.ranges.size(); ++i) {
    refs.push_back({trace.ranges[i].start_ns, RecordType::kRange, i});
  }
  for (uint32_t i = 0; i < trace.gpu_events.size(); ++i) {
    refs.push_back({trace.gpu_events[i].start_ns, RecordType::kGpuEvent, i});
  }
  std::sort(refs.begin(), refs.end(), [](const RecordRef& a, const RecordRef& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.type != b.type) return a.type < b.type;
    return a.index < b.index;
  });
  return refs;
}

// The session's capture window: [earliest start, latest end] over all records.
std::pair<int64_t, int64_t> Window(const Trace& trace) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  auto add = [&](int64_t start, int64_t end) {
    lo = std::min(lo, start);
    hi = std::max(hi, end);
  };
  for (const GpuEvent& g : trace.gpu_events) add(g.start_ns, g.end_ns());
  for (const ApiCall& a : trace.api_calls) add(a.start_ns, a.end_ns());
  for (const Range& r : trace.ranges) add(r.start_ns, r.end_ns());
  if (lo > hi) return {0, 0};  // no records
  return {lo, hi};
}

}  // namespace

absl::StatusOr<std::vector<opmap::v1::Batch>> TraceToBatches(const Trace& trace,
                                                             const BatchingOptions& options) {
  SessionBatchEncoder encoder(options, trace.strings);
  return encoder.Encode(trace, /*last=*/true);
}

SessionBatchEncoder::SessionBatchEncoder(BatchingOptions options, const StringTable& strings)
    : options_(std::move(options)), strings_(std::make_unique<StringEncoder>(strings)) {}

SessionBatchEncoder::~SessionBatchEncoder() = default;

void SessionBatchEncoder::RebindStrings(const StringTable& strings) { strings_->Rebind(strings); }

absl::StatusOr<std::vector<opmap::v1::Batch>> SessionBatchEncoder::Encode(const Trace& trace,
                                                                          bool last) {
  const BatchingOptions& options = options_;
  if (options.agent_id.empty()) return absl::InvalidArgumentError("options.agent_id: empty");
  if (options.session_id.empty()) {
    return absl::InvalidArgumentError("options.session_id: empty");
  }
  if (options.max_records_per_batch == 0) {
    return absl::InvalidArgumentError("options.max_records_per_batch: must be at least 1");
  }
  if (finished_) return absl::FailedPreconditionError("the session's last batch was encoded");
  if (absl::Status s = CheckTrace(trace); !s.ok()) return s;

  const std::vector<RecordRef> refs = RecordsByStart(trace);
  std::vector<opmap::v1::Batch> batches;
  if (refs.empty() && !last) return batches;  // nothing to send yet
  const auto [window_start, window_end] = Window(trace);
  const uint32_t resource_pid = options.resource.pid();
  StringEncoder& strings = *strings_;
  std::vector<uint32_t> kernels, memory_ops, launches, ranges;
  size_t next = 0;
  do {
    opmap::v1::Batch& batch = batches.emplace_back();
    batch.set_agent_id(options.agent_id);
    batch.set_session_id(options.session_id);
    batch.set_seq(next_seq_++);
    *batch.mutable_resource() = options.resource;
    batch.set_window_start_ns(window_start);
    batch.set_window_end_ns(window_end);
    opmap::v1::StringTableDelta* delta = batch.mutable_strings();
    if (batch.seq() == 1) {
      delta->set_base_index(0);
      delta->add_strings("");
    } else {
      delta->set_base_index(strings.size());
    }
    // One pass in time order interns names in first-use order and sorts rows by message.
    kernels.clear(), memory_ops.clear(), launches.clear(), ranges.clear();
    const size_t end = std::min(refs.size(), next + options.max_records_per_batch);
    for (; next < end; ++next) {
      const RecordRef& ref = refs[next];
      switch (ref.type) {
        case RecordType::kGpuEvent: {
          const GpuEvent& g = trace.gpu_events[ref.index];
          strings.Encode(g.name, delta);
          (g.kind == GpuEventKind::kKernel ? kernels : memory_ops).push_back(ref.index);
          break;
        }
        case RecordType::kApiCall:
          strings.Encode(trace.api_calls[ref.index].name, delta);
          launches.push_back(ref.index);
          break;
        case RecordType::kRange:
          strings.Encode(trace.ranges[ref.index].name, delta);
          strings.Encode(trace.ranges[ref.index].input_dims, delta);
          ranges.push_back(ref.index);
          break;
      }
    }
    if (!kernels.empty()) EncodeKernels(trace, kernels, strings, batch.mutable_kernels());
    if (!memory_ops.empty()) {
      EncodeMemoryOps(trace, memory_ops, strings, batch.mutable_memory_ops());
    }
    if (!launches.empty()) {
      EncodeLaunches(trace, launches, strings, resource_pid, batch.mutable_launches());
    }
    if (!ranges.empty()) EncodeRanges(trace, ranges, strings, resource_pid, batch.mutable_ranges());
  } while (next < refs.size());
  if (!last) return batches;
  finished_ = true;
  // Stall samples are per function over the whole window: they travel once, in the last
  // batch, after every kernel whose name they join by id.
  if (!trace.stalls.empty()) {
    opmap::v1::Batch& last = batches.back();
    opmap::v1::StallSamples* out = last.mutable_stalls();
    for (const StallSample& st : trace.stalls) {
      out->add_function_id(strings.Encode(st.function, last.mutable_strings()));
      out->add_reason_id(strings.Encode(st.reason, last.mutable_strings()));
      out->add_samples(static_cast<uint64_t>(st.value));  // a count: CheckEncodable
      out->add_device(static_cast<uint32_t>(st.device));
    }
  }
  batches.back().set_last_in_session(true);
  return batches;
}

int64_t EventRecordCount(const opmap::v1::Batch& batch) {
  return static_cast<int64_t>(batch.kernels().start_ns_size()) +
         batch.memory_ops().start_ns_size() + batch.launches().start_ns_size() +
         batch.ranges().start_ns_size();
}

}  // namespace opmap::analysis
