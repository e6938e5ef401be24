#include "collector/store/query_common.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/stats/multiplex.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "common/base/saturating.h"

namespace opmap::collector::query_common {
namespace {

using stats::DDSketch;

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
    case analysis::RollupSubject::kRequestComponent: return "REQUEST_COMPONENT";
    case analysis::RollupSubject::kRequestExemplar: return "REQUEST_EXEMPLAR";
  }
  return "?";
}

using base::AddSaturating;

}  // namespace

absl::Status ValidateCommit(const BatchCommit& commit) {
  if (commit.batch == nullptr) return absl::InvalidArgumentError("CommitBatch: batch is null");
  const opmap::v1::Batch& b = *commit.batch;
  if (b.agent_id().empty()) return absl::InvalidArgumentError("agent_id: empty");
  if (b.session_id().empty()) return absl::InvalidArgumentError("session_id: empty");
  if (b.seq() == 0 || b.seq() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("seq: %d is not a valid sequence number", b.seq()));
  }
  return absl::OkStatus();
}

absl::Status ValidateRange(const opmap::v1::TimeRange& range) {
  if (range.start_ns() == 0 && range.end_ns() == 0) return absl::OkStatus();
  if (range.end_ns() <= range.start_ns()) {
    return absl::InvalidArgumentError(absl::StrFormat("range.end_ns <= start_ns (%d <= %d)",
                                                      range.end_ns(), range.start_ns()));
  }
  return absl::OkStatus();
}

opmap::v1::Unavailable MakeUnavailable(std::string what, std::string reason) {
  opmap::v1::Unavailable u;
  u.set_what(std::move(what));
  u.set_reason(std::move(reason));
  return u;
}

opmap::v1::Unavailable BeforeV3(int64_t sessions) {
  return MakeUnavailable(
      "sessions before schema v3",
      absl::StrFormat("%d selected sessions were rolled up by an older collector, without "
                      "request and operator-CPU durations or counters",
                      sessions));
}

opmap::v1::Unavailable BeforeV4(int64_t sessions) {
  return MakeUnavailable(
      "sessions before schema v4",
      absl::StrFormat("%d selected sessions were rolled up by an older collector, without "
                      "modules; their values are left out of the module rows",
                      sessions));
}

void AppendKeyPart(std::string& key, std::string_view part) {
  const uint32_t n = static_cast<uint32_t>(part.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  key.append(part);
}

absl::Status Accumulator::Add(int64_t count, int64_t sum_ns, int64_t min_ns, int64_t max_ns,
                              const StoredSketch& s, absl::FunctionRef<std::string()> what) {
  if (absl::Status st = sketch.Add(s); !st.ok()) {
    return absl::DataLossError(
        absl::StrFormat("rollups: stored sketch of %s: %s", what(), st.message()));
  }
  exact.Add(count, sum_ns, min_ns, max_ns);
  return absl::OkStatus();
}

absl::Status Accumulator::AddBins(int64_t count, int64_t sum_ns, int64_t min_ns, int64_t max_ns,
                                  int scale, int64_t offset, const std::vector<uint64_t>& bins,
                                  uint64_t zero_count, double sum, double min, double max,
                                  absl::FunctionRef<std::string()> what) {
  if (absl::Status st = sketch.AddBins(scale, offset, bins, zero_count, sum, min, max);
      !st.ok()) {
    return absl::DataLossError(
        absl::StrFormat("rollups: stored sketch of %s: %s", what(), st.message()));
  }
  exact.Add(count, sum_ns, min_ns, max_ns);
  return absl::OkStatus();
}

absl::StatusOr<DDSketch> Accumulator::Sketch() const {
  absl::StatusOr<DDSketch> s = sketch.Finish();
  if (!s.ok()) {
    return absl::DataLossError(absl::StrFormat("rollups: merged sketch: %s", s.status().message()));
  }
  return s;
}

absl::StatusOr<LatencyPlan> PlanLatency(const opmap::v1::LatencyRequest& request,
                                        opmap::v1::LatencyResponse& response) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  LatencyPlan plan;
  plan.quantiles.assign(request.quantiles().begin(), request.quantiles().end());
  for (size_t i = 0; i < plan.quantiles.size(); ++i) {
    if (!(plan.quantiles[i] >= 0 && plan.quantiles[i] <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("quantiles[%d]: %g is not in [0, 1]", i, plan.quantiles[i]));
    }
  }
  if (plan.quantiles.empty()) plan.quantiles = {0.5, 0.95, 0.99};
  const bool by_operator = std::find(request.group_by().begin(), request.group_by().end(),
                                     opmap::v1::GROUP_BY_OPERATOR) != request.group_by().end();
  using analysis::RollupSubject;
  switch (request.subject()) {
    case opmap::v1::LATENCY_SUBJECT_KERNEL: plan.subject = RollupSubject::kKernel; break;
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU:
      plan.subject = RollupSubject::kOperatorGpu;
      break;
    case opmap::v1::LATENCY_SUBJECT_UNSPECIFIED:
      // Grouping by operator asks about operators: their instances' GPU time.
      plan.subject = by_operator ? RollupSubject::kOperatorGpu : RollupSubject::kKernel;
      break;
    case opmap::v1::LATENCY_SUBJECT_REQUEST: plan.subject = RollupSubject::kRequest; break;
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU:
      plan.subject = RollupSubject::kOperatorCpu;
      break;
    case opmap::v1::LATENCY_SUBJECT_REQUEST_COMPONENT:
      plan.subject = RollupSubject::kRequestComponent;
      break;
    case opmap::v1::LATENCY_SUBJECT_REQUEST_EXEMPLAR:
      plan.subject = RollupSubject::kRequestExemplar;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("subject: unknown value %d", static_cast<int>(request.subject())));
  }
  plan.host_subject = plan.subject == RollupSubject::kRequest ||
                      plan.subject == RollupSubject::kOperatorCpu ||
                      plan.subject == RollupSubject::kRequestComponent ||
                      plan.subject == RollupSubject::kRequestExemplar;
  plan.is_request = plan.subject == RollupSubject::kRequest;
  plan.is_component = plan.subject == RollupSubject::kRequestComponent ||
                      plan.subject == RollupSubject::kRequestExemplar;
  const bool is_component = plan.is_component;
  const char* const subject_name = SubjectName(plan.subject);
  const bool is_request = plan.is_request;
  auto not_for = [&](int i, const char* group, const char* why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "group_by[%d]: %s does not apply to subject %s (%s)", i, group, subject_name, why));
  };
  std::vector<KeyColumn>& columns = plan.columns;
  for (int i = 0; i < request.group_by_size(); ++i) {
    switch (request.group_by(i)) {
      case opmap::v1::GROUP_BY_OPERATOR:
        if (is_request || is_component) return not_for(i, "OPERATOR", "group by REQUEST");
        columns.push_back(KeyColumn::kOperator);
        break;
      case opmap::v1::GROUP_BY_LAYER_TYPE:
        if (is_request) return not_for(i, "LAYER_TYPE", "requests have no layer type");
        columns.push_back(KeyColumn::kLayerType);
        break;
      case opmap::v1::GROUP_BY_HOST: columns.push_back(KeyColumn::kHost); break;
      case opmap::v1::GROUP_BY_REVISION: columns.push_back(KeyColumn::kRevision); break;
      case opmap::v1::GROUP_BY_KERNEL:
        if (plan.subject != RollupSubject::kKernel && !is_component) {
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
        // Request rows keep their key in the operator column (rollup.h, tail_buckets.h).
        if (is_request || is_component) {
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
  for (KeyColumn c : columns) {
    plan.by_module |= c == KeyColumn::kModule || c == KeyColumn::kModuleType;
    plan.by_session |= c == KeyColumn::kSession;
  }
  return plan;
}

absl::Status FinishLatency(const opmap::v1::LatencyRequest& request, const LatencyPlan& plan,
                           std::vector<LatencyGroup> groups, CountSessionsFn count_sessions,
                           opmap::v1::LatencyResponse& response) {
  std::optional<SessionCount> counted;
  if (plan.by_module) {
    ASSIGN_OR_RETURN(counted, count_sessions());
    if (counted->before_v4 > 0 && !plan.host_subject) {
      *response.add_unavailable() = BeforeV4(counted->before_v4);
    }
  }
  if (plan.host_subject) {
    // Sessions an older collector rolled up have no rows of these subjects: say so, as
    // their values are missing rather than zero.
    if (!counted.has_value()) {
      ASSIGN_OR_RETURN(counted, count_sessions());
    }
    const SessionCount n = *counted;
    if (n.before_v3 > 0) *response.add_unavailable() = BeforeV3(n.before_v3);
    // v3 sessions (host rows, no modules) miss from module rows too.
    if (plan.by_module && n.before_v4 > n.before_v3) {
      *response.add_unavailable() = BeforeV4(n.before_v4 - n.before_v3);
    }
    const int64_t missing = plan.by_module ? n.before_v4 : n.before_v3;
    if (groups.empty() && n.complete > missing) {
      *response.add_unavailable() = MakeUnavailable(
          "rows", plan.is_request     ? "the selected sessions hold no request ranges (ranges named "
                                        "request or iteration, or ProfilerStep#N)"
                  : plan.is_component ? "the selected sessions hold no request breakdowns (no "
                                        "request ranges, or stored by a collector before them)"
                                      : "the selected sessions hold no operator ranges");
      return absl::OkStatus();
    }
  }
  if (groups.empty()) {
    if (response.unavailable_size() == 0) {
      *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
    }
    return absl::OkStatus();
  }
  std::sort(groups.begin(), groups.end(), [](const LatencyGroup& a, const LatencyGroup& b) {
    if (a.acc.exact.sum_ns != b.acc.exact.sum_ns) return a.acc.exact.sum_ns > b.acc.exact.sum_ns;
    return a.key < b.key;
  });
  const size_t limit = request.limit() == 0 ? kDefaultLatencyLimit : request.limit();
  response.set_truncated(groups.size() > limit);
  for (size_t i = 0; i < groups.size() && i < limit; ++i) {
    const LatencyGroup& g = groups[i];
    opmap::v1::LatencyRow* row = response.add_rows();
    for (const std::string& k : g.key) row->add_key(k);
    row->set_count(g.acc.exact.count);
    row->set_sum_ns(g.acc.exact.sum_ns);
    row->set_min_ns(g.acc.exact.min_ns);
    row->set_max_ns(g.acc.exact.max_ns);
    ASSIGN_OR_RETURN(const DDSketch sketch, g.acc.Sketch());
    for (double q : plan.quantiles) row->add_quantile_ns(sketch.Quantile(q));
    row->set_relative_accuracy(sketch.relative_accuracy());
    if (request.include_sketch()) ToProto(sketch, row->mutable_sketch());
    if (plan.by_session) {
      row->set_window_start_ns(g.window_start_ns);
      row->set_window_end_ns(g.window_end_ns);
    }
  }
  return absl::OkStatus();
}

absl::Status FinishTopKernels(const opmap::v1::TopKernelsRequest& request,
                              std::vector<KernelGroup> kernels, int64_t total_ns,
                              opmap::v1::TopKernelsResponse& response) {
  if (kernels.empty()) {
    *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
    return absl::OkStatus();
  }
  std::sort(kernels.begin(), kernels.end(), [](const KernelGroup& a, const KernelGroup& b) {
    if (a.acc.exact.sum_ns != b.acc.exact.sum_ns) return a.acc.exact.sum_ns > b.acc.exact.sum_ns;
    return a.name < b.name;
  });
  const size_t limit = request.limit() == 0 ? kDefaultTopKernels : request.limit();
  for (size_t i = 0; i < kernels.size() && i < limit; ++i) {
    const KernelGroup& k = kernels[i];
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
    row->set_share_of_gpu_time(total_ns > 0 ? static_cast<double>(k.acc.exact.sum_ns) / total_ns
                                            : 0);
  }
  return absl::OkStatus();
}

void DeviceTimes::Add(std::string_view host, int64_t device, std::string_view uuid_in,
                      std::string_view name, int64_t span_ns, int64_t busy_ns, int64_t idle_ns,
                      int64_t compute_ns, int64_t non_compute_ns, int64_t event_count) {
  std::string uuid(uuid_in);
  if (uuid.empty()) uuid = absl::StrFormat("device:%d", device);
  opmap::v1::DeviceTime& d = devices_[{std::string(host), uuid}];
  d.set_host(std::string(host));
  d.set_gpu_uuid(uuid);
  if (d.gpu_name().empty()) d.set_gpu_name(std::string(name));
  d.set_span_ns(base::SaturatingAdd(d.span_ns(), span_ns));
  d.set_busy_ns(base::SaturatingAdd(d.busy_ns(), busy_ns));
  d.set_idle_ns(base::SaturatingAdd(d.idle_ns(), idle_ns));
  d.set_compute_ns(base::SaturatingAdd(d.compute_ns(), compute_ns));
  d.set_non_compute_ns(base::SaturatingAdd(d.non_compute_ns(), non_compute_ns));
  d.set_kernel_count(base::SaturatingAdd(d.kernel_count(), static_cast<uint64_t>(event_count)));
}

void DeviceTimes::Finish(opmap::v1::TimeBreakdownResponse& response) {
  for (auto& [key, d] : devices_) *response.add_devices() = std::move(d);
  if (devices_.empty()) *response.add_unavailable() = MakeUnavailable("devices", kNoSessions);
  devices_.clear();
}

absl::StatusOr<std::vector<CounterKey>> PlanCounters(const opmap::v1::CountersRequest& request) {
  RETURN_IF_ERROR(ValidateRange(request.range()));
  std::vector<CounterKey> keys;
  for (int i = 0; i < request.group_by_size(); ++i) {
    switch (request.group_by(i)) {
      case opmap::v1::GROUP_BY_HOST: keys.push_back(CounterKey::kHost); break;
      case opmap::v1::GROUP_BY_REVISION: keys.push_back(CounterKey::kRevision); break;
      case opmap::v1::GROUP_BY_PID: keys.push_back(CounterKey::kPid); break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "group_by[%d]: %s does not apply to Counters (HOST, REVISION or PID)", i,
            opmap::v1::GroupBy_Name(request.group_by(i))));
    }
  }
  return keys;
}

void CounterTotals::AddCounter(std::string_view session, std::string_view host,
                               std::string_view revision, int64_t window_start_ns,
                               int64_t window_end_ns, std::string_view name, int source,
                               int64_t pid, int64_t samples, int64_t value,
                               int64_t time_enabled_ns, int64_t time_running_ns) {
  std::vector<std::string> parts;
  for (CounterKey k : keys_) {
    switch (k) {
      case CounterKey::kHost: parts.emplace_back(host); break;
      case CounterKey::kRevision: parts.emplace_back(revision); break;
      case CounterKey::kPid: parts.push_back(absl::StrCat(pid)); break;
    }
  }
  std::string key;
  for (const std::string& p : parts) AppendKeyPart(key, p);
  AppendKeyPart(key, name);
  AppendKeyPart(key, absl::StrCat(source));
  auto [it, inserted] = index_.try_emplace(key, groups_.size());
  if (inserted) {
    Group& g = groups_.emplace_back();
    g.key = std::move(parts);
    g.name = std::string(name);
    g.source = source;
  }
  Group& g = groups_[it->second];
  if (g.sessions == 0 || session != g.last_session) {
    g.last_session = std::string(session);
    ++g.sessions;
    if (window_start_ns > 0 && window_end_ns > window_start_ns) {
      AddSaturating(g.window_ns, window_end_ns - window_start_ns);
    }
  }
  AddSaturating(g.samples, samples);
  AddSaturating(g.value, value);
  AddSaturating(g.enabled, time_enabled_ns);
  AddSaturating(g.running, time_running_ns);
}

void CounterTotals::AddDrop(int stage, int kind, std::string_view reason, int64_t count) {
  AddSaturating(drops_[{stage, kind, std::string(reason)}], count);
}

void CounterTotals::AddUnavailable(std::string_view what, std::string_view reason) {
  unavailable_.emplace_back(what, reason);
}

absl::Status CounterTotals::Finish(const opmap::v1::CountersRequest& request,
                                   CountSessionsFn count_sessions,
                                   opmap::v1::CountersResponse& response) {
  const size_t limit = request.limit() == 0 ? kDefaultCounterRows : request.limit();
  // Distinct and ordered by (what, reason), whatever order the engine gave.
  std::sort(unavailable_.begin(), unavailable_.end());
  unavailable_.erase(std::unique(unavailable_.begin(), unavailable_.end()), unavailable_.end());
  std::sort(groups_.begin(), groups_.end(), [](const Group& a, const Group& b) {
    return std::tie(a.key, a.name, a.source) < std::tie(b.key, b.name, b.source);
  });
  bool truncated = groups_.size() > limit;
  for (size_t i = 0; i < groups_.size() && i < limit; ++i) {
    const Group& g = groups_[i];
    opmap::v1::CounterRow* row = response.add_rows();
    for (const std::string& k : g.key) row->add_key(k);
    row->set_name(g.name);
    row->set_source(g.source == opmap::v1::COUNTER_SOURCE_PAPI         ? "papi"
                    : g.source == opmap::v1::COUNTER_SOURCE_PERF_EVENT ? "perf_event"
                                                                       : "");
    row->set_value(g.value);
    row->set_time_enabled_ns(g.enabled);
    row->set_time_running_ns(g.running);
    row->set_samples(static_cast<uint64_t>(g.samples));
    row->set_sessions(static_cast<uint64_t>(g.sessions));
    if (std::optional<double> scaled = analysis::ScaleMultiplexed(g.value, g.enabled, g.running)) {
      row->set_scaled(*scaled);
      if (g.window_ns > 0) {
        row->set_per_second(static_cast<double>(*scaled * 1e9L / g.window_ns));
      }
    }
  }
  std::vector<std::pair<std::tuple<int, int, std::string>, int64_t>> sorted_drops(drops_.begin(),
                                                                                  drops_.end());
  std::stable_sort(sorted_drops.begin(), sorted_drops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  truncated = truncated || sorted_drops.size() > limit || unavailable_.size() > limit;
  for (size_t i = 0; i < sorted_drops.size() && i < limit; ++i) {
    const auto& [key, count] = sorted_drops[i];
    opmap::v1::DropCount* d = response.add_drops();
    d->set_stage(static_cast<opmap::v1::DropStage>(std::get<0>(key)));
    d->set_kind(static_cast<opmap::v1::EventKind>(std::get<1>(key)));
    d->set_reason(std::get<2>(key));
    d->set_count(static_cast<uint64_t>(count));
  }
  for (size_t i = 0; i < unavailable_.size() && i < limit; ++i) {
    *response.add_unavailable() = MakeUnavailable(unavailable_[i].first, unavailable_[i].second);
  }
  response.set_truncated(truncated);

  ASSIGN_OR_RETURN(const SessionCount n, count_sessions());
  if (n.before_v3 > 0) *response.add_unavailable() = BeforeV3(n.before_v3);
  if (n.complete == 0) {
    *response.add_unavailable() = MakeUnavailable("rows", kNoSessions);
  } else if (groups_.empty() && n.complete > n.before_v3) {
    *response.add_unavailable() =
        MakeUnavailable("rows", "the selected sessions carried no counter samples");
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector::query_common
