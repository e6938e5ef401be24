// SessionAssembler: wire Batches -> Trace, the inverse of TraceToBatches. Value
// conventions: wire_conventions.h. Decoding runs only after the whole batch validated,
// so it cannot fail half-way and a rejected batch leaves the session as it was.
#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/base/status_macros.h"
#include "analysis/wire/batch_codec.h"
#include "analysis/wire/wire_conventions.h"
#include "analysis/wire/wire_validate.h"

namespace opmap::analysis {
namespace {

namespace w = wire_internal;

// Row `i` of an OPTIONAL column, or `absent` when the batch did not send the column.
template <typename Column, typename T>
T Optional(const Column& column, int i, T absent) {
  return column.empty() ? absent : static_cast<T>(column[i]);
}

// Room for `rows` more, growing geometrically: reserving exactly size() + rows per batch
// reallocated and copied the whole session on every batch (quadratic in session size).
template <typename V>
void ReserveMore(V& v, size_t rows) {
  const size_t need = v.size() + rows;
  if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
}

void DecodeKernels(const opmap::v1::KernelColumns& k, const std::vector<StringId>& names,
                   Trace* trace) {
  const int rows = k.start_ns_size();
  ReserveMore(trace->gpu_events, static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    GpuEvent& g = trace->gpu_events.emplace_back();
    g.start_ns = k.start_ns(i);
    g.dur_ns = k.dur_ns(i);
    g.name = names[k.name_id(i)];
    g.kind = GpuEventKind::kKernel;
    g.device = w::DeviceFromWire(k.device(i));
    g.stream = k.stream(i);
    // The launching process where the sender knew it (else kNone: matched by id alone).
    g.process = w::HostIdFromWire(Optional(k.pid(), i, w::HostIdToWire(kNone)));
    g.correlation = w::IdFromWire(Optional(k.correlation(), i, uint64_t{0}));
    g.external_id = w::IdFromWire(Optional(k.external_id(), i, uint64_t{0}));
    g.graph_id = w::IdFromWire(Optional(k.graph_id(), i, uint64_t{0}));
    g.graph_node_id = w::IdFromWire(Optional(k.graph_node_id(), i, uint64_t{0}));
    g.grid = {Optional(k.grid_x(), i, 0), Optional(k.grid_y(), i, 0), Optional(k.grid_z(), i, 0)};
    g.block = {Optional(k.block_x(), i, 0), Optional(k.block_y(), i, 0),
               Optional(k.block_z(), i, 0)};
    g.registers_per_thread = w::RegistersFromWire(Optional(k.registers_per_thread(), i, 0u));
    g.shared_memory_bytes = Optional(k.static_shared_memory_bytes(), i, kNone);
  }
}

void DecodeMemoryOps(const opmap::v1::MemoryOpColumns& m, const std::vector<StringId>& names,
                     Trace* trace) {
  const int rows = m.start_ns_size();
  ReserveMore(trace->gpu_events, static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    GpuEvent& g = trace->gpu_events.emplace_back();
    const auto kind = static_cast<opmap::v1::MemoryOpKind>(m.kind(i));
    g.start_ns = m.start_ns(i);
    g.dur_ns = m.dur_ns(i);
    const uint32_t name_id = Optional(m.name_id(), i, 0u);
    // An agent may send only the kind; the event still needs a name for the reports.
    g.name = name_id != 0 ? names[name_id] : trace->strings.Intern(w::DefaultMemoryOpName(kind));
    g.kind = kind == opmap::v1::MEMORY_OP_KIND_MEMSET ? GpuEventKind::kMemset
                                                      : GpuEventKind::kMemcpy;
    g.device = w::DeviceFromWire(m.device(i));
    g.stream = m.stream(i);
    g.correlation = w::IdFromWire(Optional(m.correlation(), i, uint64_t{0}));
    g.external_id = w::IdFromWire(Optional(m.external_id(), i, uint64_t{0}));
    g.graph_id = w::IdFromWire(Optional(m.graph_id(), i, uint64_t{0}));
    g.graph_node_id = w::IdFromWire(Optional(m.graph_node_id(), i, uint64_t{0}));
    g.bytes = w::BytesFromWire(m.bytes(i));
    g.process = w::HostIdFromWire(Optional(m.pid(), i, w::HostIdToWire(kNone)));
  }
}

void DecodeLaunches(const opmap::v1::LaunchApiColumns& l, const std::vector<StringId>& names,
                    uint32_t resource_pid, Trace* trace) {
  const int rows = l.start_ns_size();
  ReserveMore(trace->api_calls, static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    ApiCall& a = trace->api_calls.emplace_back();
    a.start_ns = l.start_ns(i);
    a.dur_ns = l.dur_ns(i);
    a.name = names[l.name_id(i)];
    a.kind = w::ApiKindFromWire(l.api_kind(i));
    a.process = w::HostIdFromWire(Optional(l.pid(), i, resource_pid));
    a.thread = w::HostIdFromWire(l.tid(i));
    a.correlation = w::IdFromWire(l.correlation(i));
    a.external_id = w::IdFromWire(Optional(l.external_id(), i, uint64_t{0}));
  }
}

void DecodeRanges(const opmap::v1::RangeColumns& r, const std::vector<StringId>& names,
                  uint32_t resource_pid, Trace* trace) {
  const int rows = r.start_ns_size();
  ReserveMore(trace->ranges, static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    Range& g = trace->ranges.emplace_back();
    g.start_ns = r.start_ns(i);
    g.dur_ns = r.dur_ns(i);
    g.name = names[r.name_id(i)];
    g.kind = w::RangeKindFromWire(r.kind(i));
    g.process = w::HostIdFromWire(Optional(r.pid(), i, resource_pid));
    g.thread = w::HostIdFromWire(r.tid(i));
    g.external_id = w::IdFromWire(Optional(r.external_id(), i, uint64_t{0}));
    g.input_dims = names[Optional(r.input_dims_id(), i, 0u)];
    g.payload = w::PayloadFromWire(Optional(r.payload(), i, uint64_t{0}));
  }
}

void DecodeStalls(const opmap::v1::StallSamples& s, const std::vector<StringId>& names,
                  Trace* trace) {
  for (int i = 0; i < s.function_id_size(); ++i) {
    StallSample& st = trace->stalls.emplace_back();
    st.function = names[s.function_id(i)];
    st.reason = names[s.reason_id(i)];
    st.device = static_cast<int32_t>(Optional(s.device(), i, 0u));
    st.unit = StallUnit::kSamples;
    st.value = static_cast<double>(s.samples(i));
  }
}

}  // namespace

void SessionAssembler::AppendStrings(const opmap::v1::StringTableDelta& delta) {
  // Two wire ids may name the same text; both map to its one model id.
  for (const std::string& s : delta.strings()) {
    wire_to_model_.push_back(trace_.strings.Intern(s));
  }
}

absl::Status SessionAssembler::ApplyStringDelta(const opmap::v1::Batch& batch,
                                                const BatchLimits& limits, std::string* field) {
  RETURN_IF_ERROR(wire_internal::ValidateIdentity(batch, field));
  RETURN_IF_ERROR(wire_internal::ValidateStrings(batch.strings(), string_count(), limits, field));
  AppendStrings(batch.strings());
  return absl::OkStatus();
}

absl::Status SessionAssembler::Append(const opmap::v1::Batch& batch, const BatchLimits& limits,
                                      std::string* field) {
  RETURN_IF_ERROR(ValidateBatch(batch, string_count(), limits, field));
  RETURN_IF_ERROR(wire_internal::AddDurations(batch, duration_sums_, field));
  AppendStrings(batch.strings());
  if (trace_.info.format.empty()) {
    trace_.info.format = "live";
    // Resource.pid 0 = not given (no process has pid 0).
    const uint32_t pid = batch.resource().pid();
    trace_.info.process = pid == 0 ? kNone : w::HostIdFromWire(pid);
    for (const opmap::v1::Gpu& gpu : batch.resource().gpus()) {
      if (gpu.device() >= 1024) continue;  // an ordinal, not an allocation size
      if (trace_.info.gpu_names.size() <= gpu.device()) {
        trace_.info.gpu_names.resize(gpu.device() + 1);
      }
      trace_.info.gpu_names[gpu.device()] = gpu.name();
    }
  }
  const uint32_t pid = batch.resource().pid();
  DecodeKernels(batch.kernels(), wire_to_model_, &trace_);
  DecodeMemoryOps(batch.memory_ops(), wire_to_model_, &trace_);
  DecodeLaunches(batch.launches(), wire_to_model_, pid, &trace_);
  DecodeRanges(batch.ranges(), wire_to_model_, pid, &trace_);
  DecodeStalls(batch.stalls(), wire_to_model_, &trace_);
  return absl::OkStatus();
}

int64_t SessionAssembler::record_count() const {
  return static_cast<int64_t>(trace_.gpu_events.size() + trace_.api_calls.size() +
                              trace_.ranges.size());
}

}  // namespace opmap::analysis
