// SqliteStore queries: latency percentiles, top kernels and the time breakdown over
// rollups, and the raw-batch scan for export. Every query selects sessions by range and
// filter (SessionConditions) and merges rollup rows in C++: each row's sketch is decoded
// once into its group's accumulator, so a query costs O(rows read), whatever the number
// of kernels behind them. Latency and top-kernel queries read pre-merged bucket rows
// for the buckets wholly inside the range and per-session rows for the other selected
// sessions (rollup_buckets.h): O(buckets + sessions in partial buckets), not O(sessions).
// The Counters query is in sqlite_counters_query.cc; helpers both files use are in
// sqlite_query_internal.h.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "analysis/base/status_macros.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/modules.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sketch_columns.h"
#include "collector/store/sqlite_conditions.h"
#include "collector/store/sqlite_query_internal.h"
#include "collector/store/sqlite_store.h"

namespace opmap::collector {
namespace {

using opmap::v1::Filter;
using opmap::v1::TimeRange;
using stats::DDSketch;
using query_internal::Accumulator;
using query_internal::BeforeV3;
using query_internal::kHostBit;
using query_internal::kKernelBit;
using query_internal::kLayerTypeBit;
using query_internal::kModuleBit;
using query_internal::kNoSessions;
using query_internal::kOperatorBit;
using query_internal::kRevisionBit;
using query_internal::kSessionBit;
using query_internal::MakeUnavailable;
using query_internal::RollupView;
using query_internal::ScanRollups;

void ToProto(const DDSketch& s, opmap::v1::Sketch* out) {
  out->set_scale(s.scale());
  out->set_offset(s.offset());
  for (uint64_t b : s.bins()) out->add_counts(b);
  out->set_zero_count(s.zero_count());
  out->set_count(s.count());
  out->set_sum(s.sum());
  out->set_min(s.empty() ? 0 : s.min());
  out->set_max(s.empty() ? 0 : s.max());
}

const char* SubjectName(analysis::RollupSubject subject) {
  switch (subject) {
    case analysis::RollupSubject::kKernel: return "KERNEL";
    case analysis::RollupSubject::kOperatorGpu: return "OPERATOR_GPU";
    case analysis::RollupSubject::kRequest: return "REQUEST";
    case analysis::RollupSubject::kOperatorCpu: return "OPERATOR_CPU";
  }
  return "?";
}

opmap::v1::Unavailable BeforeV4(int64_t sessions) {
  return MakeUnavailable(
      "sessions before schema v4",
      absl::StrFormat("%d selected sessions were rolled up by an older collector, without "
                      "modules; their values are left out of the module rows",
                      sessions));
}

// Columns of RollupView a group_by selects; kModuleType is derived from the module.
enum class KeyColumn {
  kHost, kRevision, kLayerType, kOperator, kKernel, kModule, kModuleType, kSession
};

// `module_type` is ModuleTypeOf(v.module), computed once per row by the caller.
std::string_view Column(const RollupView& v, KeyColumn c, std::string_view module_type) {
  switch (c) {
    case KeyColumn::kHost: return v.host;
    case KeyColumn::kRevision: return v.revision;
    case KeyColumn::kLayerType: return v.layer_type;
    case KeyColumn::kOperator: return v.operator_name;
    case KeyColumn::kKernel: return v.kernel;
    case KeyColumn::kModule: return v.module;
    case KeyColumn::kModuleType: return module_type;
    case KeyColumn::kSession: return v.session;
  }
  return {};
}

uint32_t ColumnBit(KeyColumn c) {
  switch (c) {
    case KeyColumn::kHost: return kHostBit;
    case KeyColumn::kRevision: return kRevisionBit;
    case KeyColumn::kLayerType: return kLayerTypeBit;
    case KeyColumn::kOperator: return kOperatorBit;
    case KeyColumn::kKernel: return kKernelBit;
    case KeyColumn::kModule: return kModuleBit;
    case KeyColumn::kModuleType: return kModuleBit;
    case KeyColumn::kSession: return kSessionBit;
  }
  return 0;
}

}  // namespace

absl::StatusOr<opmap::v1::LatencyResponse> SqliteStore::QueryLatency(
    const opmap::v1::LatencyRequest& request) {
  using opmap::v1::GroupBy;
  RETURN_IF_ERROR(ValidateRange(request.range()));
  std::vector<double> quantiles(request.quantiles().begin(), request.quantiles().end());
  for (size_t i = 0; i < quantiles.size(); ++i) {
    if (!(quantiles[i] >= 0 && quantiles[i] <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("quantiles[%d]: %g is not in [0, 1]", i, quantiles[i]));
    }
  }
  if (quantiles.empty()) quantiles = {0.5, 0.95, 0.99};

  opmap::v1::LatencyResponse response;
  const bool by_operator =
      std::find(request.group_by().begin(), request.group_by().end(),
                opmap::v1::GROUP_BY_OPERATOR) != request.group_by().end();
  analysis::RollupSubject subject;
  switch (request.subject()) {
    case opmap::v1::LATENCY_SUBJECT_KERNEL:
      subject = analysis::RollupSubject::kKernel;
      break;
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU:
      subject = analysis::RollupSubject::kOperatorGpu;
      break;
    case opmap::v1::LATENCY_SUBJECT_UNSPECIFIED:
      // Grouping by operator asks about operators: their instances' GPU time.
      subject = by_operator ? analysis::RollupSubject::kOperatorGpu
                            : analysis::RollupSubject::kKernel;
      break;
    case opmap::v1::LATENCY_SUBJECT_REQUEST:
      subject = analysis::RollupSubject::kRequest;
      break;
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU:
      subject = analysis::RollupSubject::kOperatorCpu;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("subject: unknown value %d", static_cast<int>(request.subject())));
  }
  const bool host_subject = subject == analysis::RollupSubject::kRequest ||
                            subject == analysis::RollupSubject::kOperatorCpu;
  const char* const subject_name = SubjectName(subject);

  std::vector<KeyColumn> columns;
  const bool is_request = subject == analysis::RollupSubject::kRequest;
  auto not_for = [&](int i, const char* group, const char* why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "group_by[%d]: %s does not apply to subject %s (%s)", i, group, subject_name, why));
  };
  for (int i = 0; i < request.group_by_size(); ++i) {
    switch (request.group_by(i)) {
      case opmap::v1::GROUP_BY_OPERATOR:
        if (is_request) return not_for(i, "OPERATOR", "group by REQUEST");
        columns.push_back(KeyColumn::kOperator);
        break;
      case opmap::v1::GROUP_BY_LAYER_TYPE:
        if (is_request) return not_for(i, "LAYER_TYPE", "requests have no layer type");
        columns.push_back(KeyColumn::kLayerType);
        break;
      case opmap::v1::GROUP_BY_HOST: columns.push_back(KeyColumn::kHost); break;
      case opmap::v1::GROUP_BY_REVISION: columns.push_back(KeyColumn::kRevision); break;
      case opmap::v1::GROUP_BY_KERNEL:
        if (subject != analysis::RollupSubject::kKernel) {
          return not_for(i, "KERNEL", is_request ? "group by REQUEST"
                                                 : "one value per operator, over all its kernels");
        }
        columns.push_back(KeyColumn::kKernel);
        break;
      case opmap::v1::GROUP_BY_MODULE:
        if (is_request) return not_for(i, "MODULE", "requests have no module");
        columns.push_back(KeyColumn::kModule);
        break;
      case opmap::v1::GROUP_BY_MODULE_TYPE:
        if (is_request) return not_for(i, "MODULE_TYPE", "requests have no module");
        columns.push_back(KeyColumn::kModuleType);
        break;
      case opmap::v1::GROUP_BY_SESSION: columns.push_back(KeyColumn::kSession); break;
      case opmap::v1::GROUP_BY_REQUEST:
        // Request rows keep their key in the operator column (rollup.h).
        if (is_request) {
          columns.push_back(KeyColumn::kOperator);
        } else {
          *response.add_unavailable() = MakeUnavailable(
              "group_by REQUEST", absl::StrFormat("%s values are not attributed to requests "
                                                  "yet; subject REQUEST groups by request",
                                                  subject_name));
        }
        break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "group_by[%d]: unsupported value %d", i, static_cast<int>(request.group_by(i))));
    }
  }
  // A grouping we can't do makes every row wrong: no rows, only the reason.
  if (response.unavailable_size() > 0) return response;
  uint32_t key_columns = 0;
  for (KeyColumn c : columns) key_columns |= ColumnBit(c);
  const bool by_module = (key_columns & kModuleBit) != 0;
  const bool by_module_type =
      std::find(columns.begin(), columns.end(), KeyColumn::kModuleType) != columns.end();

  const bool by_session = (key_columns & kSessionBit) != 0;
  struct Group {
    std::vector<std::string> key;
    Accumulator acc;
    int64_t window_start_ns = 0, window_end_ns = 0;
  };
  std::vector<Group> groups;
  // Key: each column length-prefixed, so no name can collide with another key.
  absl::flat_hash_map<std::string, size_t> index;
  std::string key;
  std::string module_type;
  // Bucket rows merge sessions: a session grouping reads per-session rows only.
  const RollupSelection selection =
      SelectRollups(request.range(), request.filter(), by_session ? 0 : bucket_ns_);
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) {
    return ScanRollups(
        db, subject, key_columns, selection,
        [&](const RollupView& v) -> absl::Status {
          // Rows stored before v4 have no module: left out (and named below).
          if (by_module && v.module == kModuleNotCollected) return absl::OkStatus();
          if (by_module_type) module_type = analysis::ModuleTypeOf(v.module);
          key.clear();
          for (KeyColumn c : columns) {
            std::string_view part = Column(v, c, module_type);
            uint32_t n = static_cast<uint32_t>(part.size());
            key.append(reinterpret_cast<const char*>(&n), sizeof(n));
            key.append(part);
          }
          auto [it, inserted] = index.try_emplace(key, groups.size());
          if (inserted) {
            Group& g = groups.emplace_back();
            for (KeyColumn c : columns) g.key.emplace_back(Column(v, c, module_type));
            g.window_start_ns = v.window_start_ns;
            g.window_end_ns = v.window_end_ns;
          }
          Group& g = groups[it->second];
          g.window_start_ns = std::min(g.window_start_ns, v.window_start_ns);
          g.window_end_ns = std::max(g.window_end_ns, v.window_end_ns);
          return g.acc.Add(v);
        });
  }));
  std::optional<SessionCount> counted;
  if (by_module) {
    ASSIGN_OR_RETURN(counted, CountSessions(request.range(), request.filter()));
    if (counted->before_v4 > 0 && !host_subject) {
      *response.add_unavailable() = BeforeV4(counted->before_v4);
    }
  }
  if (host_subject) {
    // Sessions a v2 collector rolled up have no rows of these subjects: say so, as
    // their values are missing rather than zero.
    if (!counted.has_value()) {
      ASSIGN_OR_RETURN(counted, CountSessions(request.range(), request.filter()));
    }
    const SessionCount n = *counted;
    if (n.before_v3 > 0) *response.add_unavailable() = BeforeV3(n.before_v3);
    // v3 sessions (host rows, no modules) miss from module rows too.
    if (by_module && n.before_v4 > n.before_v3) {
      *response.add_unavailable() = BeforeV4(n.before_v4 - n.before_v3);
    }
    const int64_t missing = by_module ? n.before_v4 : n.before_v3;
    if (groups.empty() && n.complete > missing) {
      *response.add_unavailable() = MakeUnavailable(
          "rows", is_request ? "the selected sessions hold no request ranges (ranges named "
                               "request or iteration, or ProfilerStep#N)"
                             : "the selected sessions hold no operator ranges");
      return response;
    }
  }
  if (groups.empty()) {
    if (response.unavailable_size() == 0) {
      *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
    }
    return response;
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    if (a.acc.exact.sum_ns != b.acc.exact.sum_ns) return a.acc.exact.sum_ns > b.acc.exact.sum_ns;
    return a.key < b.key;
  });
  const size_t limit = request.limit() == 0 ? kDefaultLatencyLimit : request.limit();
  response.set_truncated(groups.size() > limit);
  for (size_t i = 0; i < groups.size() && i < limit; ++i) {
    const Group& g = groups[i];
    opmap::v1::LatencyRow* row = response.add_rows();
    for (const std::string& k : g.key) row->add_key(k);
    row->set_count(g.acc.exact.count);
    row->set_sum_ns(g.acc.exact.sum_ns);
    row->set_min_ns(g.acc.exact.min_ns);
    row->set_max_ns(g.acc.exact.max_ns);
    ASSIGN_OR_RETURN(const DDSketch sketch, g.acc.Sketch());
    for (double q : quantiles) row->add_quantile_ns(sketch.Quantile(q));
    row->set_relative_accuracy(sketch.relative_accuracy());
    if (request.include_sketch()) ToProto(sketch, row->mutable_sketch());
    if (by_session) {
      row->set_window_start_ns(g.window_start_ns);
      row->set_window_end_ns(g.window_end_ns);
    }
  }
  return response;
}

absl::StatusOr<SqliteStore::SessionCount> SqliteStore::CountSessions(
    const opmap::v1::TimeRange& range, const opmap::v1::Filter& filter) {
  const SessionConditions c = Conditions(range, filter);
  SessionCount n;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat("SELECT count(*), coalesce(sum(s.host_rollup = 0), "
                                                "0), coalesce(sum(s.module_rollup = 0), 0) "
                                                "FROM sessions s WHERE s.complete = 1%s",
                                                c.sql)));
    c.Bind(st);
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) {
      n.complete = st.Int(0);
      n.before_v3 = st.Int(1);
      n.before_v4 = st.Int(2);
    }
    return absl::OkStatus();
  }));
  return n;
}

absl::StatusOr<opmap::v1::TopKernelsResponse> SqliteStore::QueryTopKernels(
    const opmap::v1::TopKernelsRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  struct Kernel {
    std::string name;
    Accumulator acc;
    analysis::LayerTimes layer_time = {};
  };
  std::vector<Kernel> kernels;
  absl::flat_hash_map<std::string, size_t> index;
  std::string name;  // reused: one allocation, not one per row
  int64_t total_ns = 0;
  const RollupSelection selection =
      SelectRollups(request.range(), request.filter(), bucket_ns_);
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) {
    return ScanRollups(
        db, analysis::RollupSubject::kKernel, kKernelBit | kLayerTypeBit, selection,
        [&](const RollupView& v) -> absl::Status {
          name.assign(v.kernel);
          auto [it, inserted] = index.try_emplace(name, kernels.size());
          if (inserted) kernels.emplace_back().name = name;
          Kernel& k = kernels[it->second];
          const analysis::LayerType type =
              analysis::ParseLayerType(v.layer_type).value_or(analysis::LayerType::kOther);
          k.layer_time[static_cast<int>(type)] += v.sum_ns;
          total_ns += v.sum_ns;
          return k.acc.Add(v);
        });
  }));
  opmap::v1::TopKernelsResponse response;
  if (kernels.empty()) {
    *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
    return response;
  }
  std::sort(kernels.begin(), kernels.end(), [](const Kernel& a, const Kernel& b) {
    if (a.acc.exact.sum_ns != b.acc.exact.sum_ns) return a.acc.exact.sum_ns > b.acc.exact.sum_ns;
    return a.name < b.name;
  });
  const size_t limit = request.limit() == 0 ? kDefaultTopKernels : request.limit();
  for (size_t i = 0; i < kernels.size() && i < limit; ++i) {
    const Kernel& k = kernels[i];
    opmap::v1::KernelRow* row = response.add_rows();
    row->set_name(k.name);
    // As `opmap analyze` types a kernel name: the layer type holding most of its time.
    row->set_layer_type(std::string(LayerTypeName(analysis::HeaviestLayerType(k.layer_time))));
    row->set_count(k.acc.exact.count);
    row->set_total_ns(k.acc.exact.sum_ns);
    row->set_min_ns(k.acc.exact.min_ns);
    row->set_max_ns(k.acc.exact.max_ns);
    ASSIGN_OR_RETURN(const DDSketch sketch, k.acc.Sketch());
    row->set_p50_ns(sketch.Quantile(0.5));
    row->set_p99_ns(sketch.Quantile(0.99));
    row->set_share_of_gpu_time(total_ns > 0 ? static_cast<double>(k.acc.exact.sum_ns) / total_ns : 0);
  }
  return response;
}

absl::StatusOr<opmap::v1::TimeBreakdownResponse> SqliteStore::QueryTimeBreakdown(
    const opmap::v1::TimeBreakdownRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  const SessionConditions c = Conditions(request.range(), request.filter());
  // Keyed by (host, GPU UUID); a GPU whose UUID the agent did not report is keyed, and
  // reported, as "device:<ordinal>" of its process.
  std::map<std::pair<std::string, std::string>, opmap::v1::DeviceTime> devices;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db.Prepare(absl::StrFormat(
            "SELECT s.host, d.device, d.gpu_uuid, d.gpu_name, d.span_ns, d.busy_ns, d.idle_ns, "
            "d.compute_ns, d.non_compute_ns, d.event_count FROM sessions s JOIN device_times d "
            "ON d.session_id = s.id WHERE s.complete = 1%s",
            c.sql)));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      std::string uuid(st.Text(2));
      if (uuid.empty()) uuid = absl::StrFormat("device:%d", st.Int(1));
      opmap::v1::DeviceTime& d = devices[{std::string(st.Text(0)), uuid}];
      d.set_host(std::string(st.Text(0)));
      d.set_gpu_uuid(uuid);
      if (d.gpu_name().empty()) d.set_gpu_name(std::string(st.Text(3)));
      d.set_span_ns(d.span_ns() + st.Int(4));
      d.set_busy_ns(d.busy_ns() + st.Int(5));
      d.set_idle_ns(d.idle_ns() + st.Int(6));
      d.set_compute_ns(d.compute_ns() + st.Int(7));
      d.set_non_compute_ns(d.non_compute_ns() + st.Int(8));
      d.set_kernel_count(d.kernel_count() + static_cast<uint64_t>(st.Int(9)));
    }
  }));
  opmap::v1::TimeBreakdownResponse response;
  for (auto& [key, d] : devices) *response.add_devices() = std::move(d);
  if (devices.empty()) *response.add_unavailable() = MakeUnavailable("devices", kNoSessions);
  return response;
}

absl::Status SqliteStore::ForEachBatch(const opmap::v1::TimeRange& range,
                                       const opmap::v1::Filter& filter,
                                       const std::function<absl::Status(std::string_view)>& visit) {
  RETURN_IF_ERROR(ValidateRange(range));
  const SessionConditions c = Conditions(range, filter);
  // Row ids first, then one payload at a time without holding the lock during `visit`
  // (an export may be slow; ingest must not wait for it). A batch expired in between
  // is skipped.
  std::vector<int64_t> rowids;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat(
                         "SELECT b.rowid FROM sessions s JOIN batches b ON b.session_id = s.id "
                         "WHERE 1%s ORDER BY s.agent, s.session, b.seq",
                         c.sql)));
    c.Bind(st);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      rowids.push_back(st.Int(0));
    }
  }));
  std::string payload;
  for (int64_t rowid : rowids) {
    bool found = false;
    RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
      ASSIGN_OR_RETURN(sqlite::Statement st,
                       db.Prepare("SELECT payload FROM batches WHERE rowid = ?1"));
      st.BindInt(1, rowid);
      ASSIGN_OR_RETURN(found, st.Step());
      if (found) payload.assign(st.Blob(0));
      return absl::OkStatus();
    }));
    if (found) RETURN_IF_ERROR(visit(payload));
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector