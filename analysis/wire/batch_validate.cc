// ValidateBatch: everything the collector checks before a batch touches a session.
// The first offending value wins; its path ("kernels.dur_ns[3]") and a RejectionCode
// travel with the status so the collector can fill Rejection without parsing text.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "common/base/status_macros.h"
#include "analysis/wire/batch_codec.h"
#include "analysis/wire/wire_validate.h"

namespace opmap::analysis {
namespace {

constexpr absl::string_view kCodePayload = "type.opmap.dev/opmap.v1.RejectionCode";

// One column's name and length, for the length rule.
struct ColumnLength {
  const char* name;
  int size;
};

// Columns of one message: `columns[0]` is the REQUIRED column that defines the row count;
// the rest are REQUIRED (exactly `rows` values) or OPTIONAL (`rows` or none).
struct ColumnGroup {
  const char* message;
  std::vector<ColumnLength> required;
  std::vector<ColumnLength> optional;
};

absl::Status CheckLengths(const ColumnGroup& group, std::string* field) {
  const int rows = group.required.front().size;
  for (const ColumnLength& c : group.required) {
    if (c.size != rows) {
      return wire_internal::Reject(opmap::v1::REJECTION_CODE_COLUMN_LENGTH,
                                   absl::StrFormat("%s.%s", group.message, c.name),
                                   absl::StrFormat("%d values for %d rows", c.size, rows),
                                   field);
    }
  }
  for (const ColumnLength& c : group.optional) {
    if (c.size != 0 && c.size != rows) {
      return wire_internal::Reject(
          opmap::v1::REJECTION_CODE_COLUMN_LENGTH,
          absl::StrFormat("%s.%s", group.message, c.name),
          absl::StrFormat("%d values for %d rows", c.size, rows), field);
    }
  }
  return absl::OkStatus();
}

std::vector<ColumnGroup> Groups(const opmap::v1::Batch& b) {
  const auto& k = b.kernels();
  const auto& m = b.memory_ops();
  const auto& l = b.launches();
  const auto& r = b.ranges();
  const auto& c = b.counters();
  const auto& s = b.stalls();
  return {
      {"kernels",
       {{"start_ns", k.start_ns_size()}, {"dur_ns", k.dur_ns_size()},
        {"name_id", k.name_id_size()}, {"device", k.device_size()}, {"stream", k.stream_size()}},
       {{"correlation", k.correlation_size()}, {"external_id", k.external_id_size()},
        {"graph_id", k.graph_id_size()}, {"graph_node_id", k.graph_node_id_size()},
        {"grid_x", k.grid_x_size()}, {"grid_y", k.grid_y_size()}, {"grid_z", k.grid_z_size()},
        {"block_x", k.block_x_size()}, {"block_y", k.block_y_size()},
        {"block_z", k.block_z_size()}, {"registers_per_thread", k.registers_per_thread_size()},
        {"static_shared_memory_bytes", k.static_shared_memory_bytes_size()},
        {"dynamic_shared_memory_bytes", k.dynamic_shared_memory_bytes_size()},
        {"launch_tid", k.launch_tid_size()}, {"pid", k.pid_size()}}},
      // MemoryOpColumns' first field is `kind`, but start_ns names the rows everywhere.
      {"memory_ops",
       {{"start_ns", m.start_ns_size()}, {"kind", m.kind_size()}, {"dur_ns", m.dur_ns_size()},
        {"bytes", m.bytes_size()}, {"device", m.device_size()}, {"stream", m.stream_size()}},
       {{"correlation", m.correlation_size()}, {"external_id", m.external_id_size()},
        {"graph_id", m.graph_id_size()}, {"graph_node_id", m.graph_node_id_size()},
        {"host_pageable", m.host_pageable_size()}, {"dst_device", m.dst_device_size()},
        {"name_id", m.name_id_size()}, {"pid", m.pid_size()}}},
      {"launches",
       {{"start_ns", l.start_ns_size()}, {"dur_ns", l.dur_ns_size()},
        {"name_id", l.name_id_size()}, {"api_kind", l.api_kind_size()}, {"tid", l.tid_size()},
        {"correlation", l.correlation_size()}},
       {{"pid", l.pid_size()}, {"external_id", l.external_id_size()}}},
      {"ranges",
       {{"start_ns", r.start_ns_size()}, {"dur_ns", r.dur_ns_size()},
        {"name_id", r.name_id_size()}, {"kind", r.kind_size()}, {"tid", r.tid_size()}},
       {{"domain_id", r.domain_id_size()}, {"pid", r.pid_size()}, {"depth", r.depth_size()},
        {"external_id", r.external_id_size()}, {"flops", r.flops_size()},
        {"bytes", r.bytes_size()}, {"input_dims_id", r.input_dims_id_size()},
        {"payload", r.payload_size()}}},
      {"counters",
       {{"ts_ns", c.ts_ns_size()}, {"name_id", c.name_id_size()}, {"source", c.source_size()},
        {"value", c.value_size()}, {"time_enabled_ns", c.time_enabled_ns_size()},
        {"time_running_ns", c.time_running_ns_size()}},
       {{"pid", c.pid_size()}}},
      {"stalls",
       {{"function_id", s.function_id_size()}, {"reason_id", s.reason_id_size()},
        {"samples", s.samples_size()}},
       {{"device", s.device_size()}}},
      {"stalls",
       {{"total_function_id", s.total_function_id_size()},
        {"total_samples", s.total_samples_size()}},
       {}},
  };
}

using wire_internal::kMaxDurationNs;
using wire_internal::kMaxTimestampNs;
using wire_internal::kMaxSessionDurationSumNs;

// Value rules, per column. `table` is the session's string count including this batch.
class ValueChecker {
 public:
  ValueChecker(uint64_t table, std::string* field) : table_(table), field_(field) {}

  template <typename Column>
  absl::Status Durations(const char* path, const Column& column) {
    for (int i = 0; i < column.size(); ++i) {
      if (column[i] < 0) {
        return Bad(path, i, absl::StrFormat("negative duration %d", column[i]));
      }
      if (column[i] > kMaxDurationNs) {
        return Bad(path, i, absl::StrFormat("duration %d ns is over the limit of 2^52 ns (%d)",
                                            column[i], kMaxDurationNs));
      }
    }
    return absl::OkStatus();
  }

  // |t| <= 2^62, so that t + a valid duration cannot overflow.
  template <typename Column>
  absl::Status Timestamps(const char* path, const Column& column) {
    for (int i = 0; i < column.size(); ++i) {
      if (column[i] > kMaxTimestampNs || column[i] < -kMaxTimestampNs) {
        return Bad(path, i, absl::StrFormat("timestamp %d ns is outside ±2^62 ns", column[i]));
      }
    }
    return absl::OkStatus();
  }

  template <typename Column>
  absl::Status StringIds(const char* path, const Column& column) {
    for (int i = 0; i < column.size(); ++i) {
      if (column[i] >= table_) {
        return wire_internal::Reject(
            opmap::v1::REJECTION_CODE_UNKNOWN_STRING_ID, absl::StrFormat("%s[%d]", path, i),
            absl::StrFormat("string id %d not in the session's table (%d strings)", column[i],
                            table_),
            field_);
      }
    }
    return absl::OkStatus();
  }

  // NaN = unknown for this row; anything else must be a count.
  template <typename Column>
  absl::Status Counts(const char* path, const Column& column) {
    for (int i = 0; i < column.size(); ++i) {
      double v = column[i];
      if (!std::isnan(v) && (!std::isfinite(v) || v < 0)) {
        return Bad(path, i, absl::StrFormat("%g is not a count (finite and >= 0, or NaN "
                                            "for unknown)", v));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Bad(const char* path, int i, const std::string& what) {
    return wire_internal::Reject(opmap::v1::REJECTION_CODE_INVALID_VALUE,
                                 absl::StrFormat("%s[%d]", path, i), what, field_);
  }

 private:
  uint64_t table_;
  std::string* field_;
};

absl::Status CheckValues(const opmap::v1::Batch& b, uint64_t table, std::string* field) {
  ValueChecker v(table, field);
  const auto& k = b.kernels();
  RETURN_IF_ERROR(v.Timestamps("kernels.start_ns", k.start_ns()));
  RETURN_IF_ERROR(v.Timestamps("memory_ops.start_ns", b.memory_ops().start_ns()));
  RETURN_IF_ERROR(v.Timestamps("launches.start_ns", b.launches().start_ns()));
  RETURN_IF_ERROR(v.Timestamps("ranges.start_ns", b.ranges().start_ns()));
  RETURN_IF_ERROR(v.Timestamps("counters.ts_ns", b.counters().ts_ns()));
  RETURN_IF_ERROR(v.Durations("kernels.dur_ns", k.dur_ns()));
  RETURN_IF_ERROR(v.StringIds("kernels.name_id", k.name_id()));

  const auto& m = b.memory_ops();
  for (int i = 0; i < m.kind_size(); ++i) {
    // UNSPECIFIED too: an agent always knows memset from memcpy, and MEMCPY_OTHER
    // exists for copies it cannot name.
    if (!opmap::v1::MemoryOpKind_IsValid(m.kind(i)) ||
        m.kind(i) == opmap::v1::MEMORY_OP_KIND_UNSPECIFIED) {
      return v.Bad("memory_ops.kind", i, absl::StrFormat("invalid memory op kind %d", m.kind(i)));
    }
  }
  RETURN_IF_ERROR(v.Durations("memory_ops.dur_ns", m.dur_ns()));
  RETURN_IF_ERROR(v.StringIds("memory_ops.name_id", m.name_id()));

  const auto& l = b.launches();
  RETURN_IF_ERROR(v.Durations("launches.dur_ns", l.dur_ns()));
  RETURN_IF_ERROR(v.StringIds("launches.name_id", l.name_id()));

  const auto& r = b.ranges();
  RETURN_IF_ERROR(v.Durations("ranges.dur_ns", r.dur_ns()));
  RETURN_IF_ERROR(v.StringIds("ranges.name_id", r.name_id()));
  RETURN_IF_ERROR(v.StringIds("ranges.domain_id", r.domain_id()));
  RETURN_IF_ERROR(v.StringIds("ranges.input_dims_id", r.input_dims_id()));
  RETURN_IF_ERROR(v.Counts("ranges.flops", r.flops()));
  RETURN_IF_ERROR(v.Counts("ranges.bytes", r.bytes()));
  for (int i = 0; i < r.payload_size(); ++i) {
    if (r.payload(i) > (uint64_t{1} << 63)) {
      return v.Bad("ranges.payload", i, "payload above 2^63 (payload + 1 is sent)");
    }
  }

  const auto& c = b.counters();
  RETURN_IF_ERROR(v.StringIds("counters.name_id", c.name_id()));
  RETURN_IF_ERROR(v.Durations("counters.time_enabled_ns", c.time_enabled_ns()));
  RETURN_IF_ERROR(v.Durations("counters.time_running_ns", c.time_running_ns()));
  for (int i = 0; i < c.time_running_ns_size(); ++i) {
    if (c.time_running_ns(i) > c.time_enabled_ns(i)) {
      return v.Bad("counters.time_running_ns", i,
                    absl::StrFormat("%d ns running exceeds %d ns enabled", c.time_running_ns(i),
                                    c.time_enabled_ns(i)));
    }
  }

  const auto& s = b.stalls();
  RETURN_IF_ERROR(v.StringIds("stalls.function_id", s.function_id()));
  RETURN_IF_ERROR(v.StringIds("stalls.reason_id", s.reason_id()));
  RETURN_IF_ERROR(v.StringIds("stalls.total_function_id", s.total_function_id()));
  return absl::OkStatus();
}

}  // namespace

namespace wire_internal {

absl::Status AddDurations(const opmap::v1::Batch& b, SessionDurationSums& sums,
                          std::string* field) {
  SessionDurationSums next = sums;
  struct Column {
    const char* path;
    const google::protobuf::RepeatedField<int64_t>& values;
    int64_t* total;
  };
  const Column columns[] = {
      {"kernels.dur_ns", b.kernels().dur_ns(), &next.kernels},
      {"memory_ops.dur_ns", b.memory_ops().dur_ns(), &next.memory_ops},
      {"launches.dur_ns", b.launches().dur_ns(), &next.launches},
      {"ranges.dur_ns", b.ranges().dur_ns(), &next.ranges},
      {"counters.time_enabled_ns", b.counters().time_enabled_ns(), &next.counter_enabled},
  };
  for (const Column& c : columns) {
    for (int i = 0; i < c.values.size(); ++i) {
      // Each value is in [0, 2^52] (validated), the total stays <= 2^62: no overflow.
      *c.total += c.values[i];
      if (*c.total > kMaxSessionDurationSumNs) {
        return Reject(opmap::v1::REJECTION_CODE_INVALID_VALUE,
                      absl::StrFormat("%s[%d]", c.path, i),
                      absl::StrFormat("the session's %s would sum past 2^62 ns", c.path), field);
      }
    }
  }
  sums = next;
  return absl::OkStatus();
}

absl::Status Reject(opmap::v1::RejectionCode code, const std::string& path,
                    std::string_view what, std::string* field) {
  if (field != nullptr) *field = path;
  absl::Status status = absl::InvalidArgumentError(
      absl::StrFormat("%s: %s", path.empty() ? "batch" : path, what));
  status.SetPayload(kCodePayload, absl::Cord(absl::StrFormat("%d", static_cast<int>(code))));
  return status;
}

absl::Status ValidateIdentity(const opmap::v1::Batch& batch, std::string* field) {
  constexpr auto kCode = opmap::v1::REJECTION_CODE_MISSING_IDENTITY;
  if (batch.agent_id().empty()) return Reject(kCode, "agent_id", "empty", field);
  if (batch.session_id().empty()) return Reject(kCode, "session_id", "empty", field);
  if (batch.seq() == 0) return Reject(kCode, "seq", "0 is invalid (seqs start at 1)", field);
  return absl::OkStatus();
}

absl::Status ValidateStrings(const opmap::v1::StringTableDelta& delta, uint32_t known_strings,
                             const BatchLimits& limits, std::string* field) {
  const int n = delta.strings_size();
  if (static_cast<size_t>(n) > limits.max_new_strings) {
    return Reject(opmap::v1::REJECTION_CODE_TOO_LARGE, "strings.strings",
                  absl::StrFormat("%d new strings, over the limit of %d", n,
                                  limits.max_new_strings),
                  field);
  }
  for (int i = 0; i < n; ++i) {
    if (delta.strings(i).size() > limits.max_string_bytes) {
      return Reject(opmap::v1::REJECTION_CODE_TOO_LARGE, absl::StrFormat("strings.strings[%d]", i),
                    absl::StrFormat("%d bytes, over the limit of %d", delta.strings(i).size(),
                                    limits.max_string_bytes),
                    field);
    }
  }
  if (n == 0) return absl::OkStatus();  // base_index means nothing without strings
  if (delta.base_index() != known_strings) {
    return Reject(opmap::v1::REJECTION_CODE_STRING_TABLE_GAP, "strings.base_index",
                  absl::StrFormat("%d does not continue the session's string table "
                                  "(expected %d)", delta.base_index(), known_strings),
                  field);
  }
  if (known_strings == 0 && !delta.strings(0).empty()) {
    return Reject(opmap::v1::REJECTION_CODE_INVALID_VALUE, "strings.strings[0]",
                  "id 0 must be \"\" (the first batch's table starts with it)", field);
  }
  if (uint64_t{known_strings} + n > UINT32_MAX) {
    return Reject(opmap::v1::REJECTION_CODE_TOO_LARGE, "strings.strings",
                  "the session's string table would pass 2^32-1 strings", field);
  }
  return absl::OkStatus();
}

}  // namespace wire_internal

absl::Status ValidateBatch(const opmap::v1::Batch& batch, uint32_t known_strings,
                           const BatchLimits& limits, std::string* field) {
  RETURN_IF_ERROR(wire_internal::ValidateIdentity(batch, field));
  const std::vector<ColumnGroup> groups = Groups(batch);
  uint64_t records = 0;
  for (const ColumnGroup& g : groups) records += g.required.front().size;
  if (records > limits.max_records) {
    return wire_internal::Reject(
        opmap::v1::REJECTION_CODE_TOO_LARGE, "",
        absl::StrFormat("%d records, over the limit of %d", records, limits.max_records), field);
  }
  RETURN_IF_ERROR(
      wire_internal::ValidateStrings(batch.strings(), known_strings, limits, field));
  for (const ColumnGroup& g : groups) RETURN_IF_ERROR(CheckLengths(g, field));
  RETURN_IF_ERROR(wire_internal::ValidatePower(batch, field));
  return CheckValues(batch, uint64_t{known_strings} + batch.strings().strings_size(), field);
}

opmap::v1::RejectionCode RejectionCodeFor(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kCodePayload);
  int code = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &code) ||
      !opmap::v1::RejectionCode_IsValid(code)) {
    return opmap::v1::REJECTION_CODE_UNSPECIFIED;
  }
  return static_cast<opmap::v1::RejectionCode>(code);
}

}  // namespace opmap::analysis
