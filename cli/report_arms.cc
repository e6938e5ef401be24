#include "cli/report_arms.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <simdjson.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "common/base/status_macros.h"
#include "analysis/release/arm_figures.h"
#include "cli/tail_rows.h"
#include "opmap/v1/query.grpc.pb.h"
#include "common/version/version.h"

namespace opmap::cli {
namespace {

using analysis::Arm;

using Stub = opmap::v1::Query::Stub;


opmap::v1::LatencyRequest LatencyRequestFor(const ArmQuery& q, opmap::v1::LatencySubject subject) {
  opmap::v1::LatencyRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.set_subject(subject);
  for (double v : {0.5, 0.95, 0.99}) req.add_quantiles(v);
  req.set_limit(100000);
  return req;
}

// Per layer: module (or layer type when no module was recorded) → Σ operator time, from
// GPU operator time where the sessions have it, else host time.
absl::Status FetchLayers(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  for (opmap::v1::LatencySubject subject :
       {opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU, opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU}) {
    for (opmap::v1::GroupBy layer_key : {opmap::v1::GROUP_BY_MODULE, opmap::v1::GROUP_BY_LAYER_TYPE}) {
      opmap::v1::LatencyRequest req = LatencyRequestFor(q, subject);
      req.add_group_by(layer_key);
      req.add_group_by(opmap::v1::GROUP_BY_OPERATOR);
      opmap::v1::LatencyResponse resp;
      RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
        return s.LatencyPercentiles(&c, req, &resp);
      }));
      if (resp.rows_size() == 0) break;  // this subject has no rows: try the next one
      if (analysis::SetLayers(resp, layer_key == opmap::v1::GROUP_BY_MODULE,
                              subject == opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU, arm)) {
        return absl::OkStatus();
      }
      // no modules recorded: group by layer type
    }
  }
  arm.unavailable["layers"] = "the sessions hold no operator rows";
  return absl::OkStatus();
}

absl::Status FetchStallShare(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  opmap::v1::CountersRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  opmap::v1::CountersResponse resp;
  RETURN_IF_ERROR(CallQuery(client, "Counters", [&](Stub& s, grpc::ClientContext& c) {
    return s.Counters(&c, req, &resp);
  }));
  analysis::SetStallShare(resp, arm);
  return absl::OkStatus();
}

// GPU power per window (Power grouped by session): perf per watt and the power mode.
absl::StatusOr<opmap::v1::PowerResponse> FetchPower(CollectorChannel& client, const ArmQuery& q) {
  opmap::v1::PowerRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.add_group_by(opmap::v1::GROUP_BY_SESSION);
  req.set_limit(100000);
  opmap::v1::PowerResponse resp;
  RETURN_IF_ERROR(CallQuery(client, "Power", [&](Stub& s, grpc::ClientContext& c) {
    return s.Power(&c, req, &resp);
  }));
  return resp;
}

// Framework, compiler, CUDA and driver versions of the arm's sessions: the collector's
// ExportTrace writes each session's Resource as an `opmap_resource` metadata event, so one
// event per session is enough. Values that differ between sessions are all listed.
// Every value of every key of the selected sessions' resource records (the one
// `opmap_resource` metadata event each session's export starts with).
using ResourceValues = std::map<std::string, std::set<std::string>>;
absl::StatusOr<ResourceValues> FetchResourceValues(CollectorChannel& client,
                                                   opmap::v1::ExportTraceRequest req) {
  req.set_max_events(1);
  bool truncated = false;
  ASSIGN_OR_RETURN(const std::string doc, ExportTraceJson(client, req, &truncated));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(doc).get(root) != simdjson::SUCCESS) {
    return absl::DataLossError("ExportTrace: the collector's document does not parse");
  }
  ResourceValues values;
  simdjson::dom::array events;
  if (root["traceEvents"].get(events) != simdjson::SUCCESS) return values;
  for (simdjson::dom::element e : events) {
    std::string_view name;
    simdjson::dom::object args;
    if (e["name"].get(name) != simdjson::SUCCESS || name != "opmap_resource" ||
        e["args"].get(args) != simdjson::SUCCESS) {
      continue;
    }
    for (simdjson::dom::key_value_pair kv : args) {
      std::string_view v;
      if (kv.value.get(v) == simdjson::SUCCESS) values[std::string(kv.key)].insert(std::string(v));
    }
  }
  return values;
}

absl::Status FetchResourceInputs(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  opmap::v1::ExportTraceRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  ASSIGN_OR_RETURN(const ResourceValues values, FetchResourceValues(client, std::move(req)));
  for (const auto& [key, set] : values) {
    // Listed from the rollups already; a non-revision arm keeps the revisions its sessions
    // ran (the profile's per-revision keys apply by them: ProfileRevision).
    if (key == "host" || (key == "revision" && arm.key == "revision")) continue;
    if (key == "label." + arm.key) continue;            // the arm's own value
    std::string joined;
    for (const std::string& v : set) joined += (joined.empty() ? "" : ",") + v;
    arm.inputs[key] = joined;
  }
  return absl::OkStatus();
}

// --arms KEY lists a label's values session by session up to this many sessions.
constexpr int kMaxArmSessions = 1000;

}  // namespace

absl::StatusOr<ArmSelector> ParseArmSelector(std::string_view text) {
  ArmSelector a;
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    a.value = std::string(text);
  } else {
    a.key = std::string(text.substr(0, eq));
    a.value = std::string(text.substr(eq + 1));
    if (a.key.empty()) return absl::InvalidArgumentError("'" + std::string(text) + "': empty KEY in KEY=VALUE");
  }
  if (a.value.empty()) return absl::InvalidArgumentError("'" + std::string(text) + "': empty value");
  return a;
}

absl::StatusOr<opmap::v1::Filter> ArmFilter(const opmap::v1::Filter& base, const ArmSelector& arm) {
  opmap::v1::Filter f = base;
  std::string* field = arm.key == "revision" ? f.mutable_revision()
                       : arm.key == "host"   ? f.mutable_host()
                       : arm.key == "model"  ? f.mutable_model()
                                             : nullptr;
  if (field != nullptr) {
    if (!field->empty() && *field != arm.value) {
      return absl::InvalidArgumentError(absl::StrCat("--", arm.key, " ", *field, " also selects on the arms' key '",
                                                     arm.key, "'"));
    }
    *field = arm.value;
    return f;
  }
  auto it = f.labels().find(arm.key);
  if (it != f.labels().end() && it->second != arm.value) {
    return absl::InvalidArgumentError(absl::StrCat("--label ", arm.key, "=", it->second,
                                                   " also selects on the arms' key '", arm.key, "'"));
  }
  (*f.mutable_labels())[arm.key] = arm.value;
  return f;
}

absl::StatusOr<std::string> ExportTraceJson(CollectorChannel& client,
                                            const opmap::v1::ExportTraceRequest& req, bool* truncated) {
  std::string doc;
  *truncated = false;
  RETURN_IF_ERROR(CallQuery(client, "ExportTrace", [&](Stub& s, grpc::ClientContext& c) {
    doc.clear();
    std::unique_ptr<grpc::ClientReader<opmap::v1::TraceChunk>> reader = s.ExportTrace(&c, req);
    opmap::v1::TraceChunk chunk;
    while (reader->Read(&chunk)) {
      doc += chunk.data();
      if (chunk.last()) *truncated = chunk.truncated();
    }
    return reader->Finish();
  }));
  return doc;
}

absl::StatusOr<std::vector<std::string>> ArmValues(CollectorChannel& client,
                                                   const opmap::v1::TimeRange* range,
                                                   const opmap::v1::Filter& filter,
                                                   const std::string& key) {
  std::set<std::string> values;
  if (key == "revision" || key == "host") {
    opmap::v1::LatencyRequest req;
    if (range != nullptr) *req.mutable_range() = *range;
    *req.mutable_filter() = filter;
    req.set_subject(opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.add_group_by(key == "host" ? opmap::v1::GROUP_BY_HOST : opmap::v1::GROUP_BY_REVISION);
    req.set_limit(100000);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    for (const auto& row : resp.rows()) {
      if (row.key_size() > 0 && !row.key(0).empty()) values.insert(row.key(0));
    }
    return std::vector<std::string>(values.begin(), values.end());
  }
  // Any other key: each session's resource record (the metadata event its export starts
  // with), one session at a time; the sessions are those with request rows.
  opmap::v1::LatencyRequest sessions_req;
  if (range != nullptr) *sessions_req.mutable_range() = *range;
  *sessions_req.mutable_filter() = filter;
  sessions_req.set_subject(opmap::v1::LATENCY_SUBJECT_REQUEST);
  sessions_req.add_group_by(opmap::v1::GROUP_BY_SESSION);
  sessions_req.set_limit(kMaxArmSessions + 1);
  opmap::v1::LatencyResponse sessions;
  RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
    return s.LatencyPercentiles(&c, sessions_req, &sessions);
  }));
  if (sessions.rows_size() > static_cast<int>(kMaxArmSessions) || sessions.truncated()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--arms %s: the selection holds more than %d sessions; list the values "
        "(--arms %s=V1,V2) or narrow the selection (--since, --host, --label)",
        key, kMaxArmSessions, key));
  }
  const std::string field = (key == "model" ? std::string("model") : "label." + key);
  for (const auto& row : sessions.rows()) {
    if (row.key_size() == 0) continue;
    const std::string& id = row.key(0);
    const size_t slash = id.find('/');
    if (slash == std::string::npos) continue;
    opmap::v1::ExportTraceRequest req;
    *req.mutable_filter() = filter;
    req.set_agent_id(id.substr(0, slash));
    req.set_session_id(id.substr(slash + 1));
    ASSIGN_OR_RETURN(const ResourceValues resource, FetchResourceValues(client, std::move(req)));
    if (auto it = resource.find(field); it != resource.end()) {
      for (const std::string& v : it->second) {
        if (!v.empty()) values.insert(v);
      }
    }
  }
  return std::vector<std::string>(values.begin(), values.end());
}

// The p99 tail per request key from the request-breakdown rollups (docs/metrics.md "Tail
// latency"); none when the sessions hold no breakdowns.
absl::Status FetchTails(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  const opmap::v1::LatencyRequest req =
      TailRowsRequest(q.has_range ? &q.range : nullptr, q.filter, {}, 1'000'000);
  opmap::v1::LatencyResponse resp;
  RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
    return s.LatencyPercentiles(&c, req, &resp);
  }));
  int64_t bad_rows = 0;
  for (const TailGroup& g : ParseTailRows(resp, 0, &bad_rows)) {
    arm.tails.push_back(analysis::ExplainTailFromBuckets(g.request_key, g.buckets, 0.99));
  }
  if (arm.tails.empty()) arm.unavailable["tail"] = "the sessions hold no request breakdowns";
  return absl::OkStatus();
}

absl::StatusOr<FetchedArm> FetchArm(CollectorChannel& client, const ArmQuery& q) {
  FetchedArm out;
  Arm& arm = out.arm;
  arm.key = q.arm.key;
  arm.revision = q.arm.value;
  // Windows: one per capture session; then the whole arm, merged exactly by the collector.
  for (bool by_session : {true, false}) {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    if (by_session) req.add_group_by(opmap::v1::GROUP_BY_SESSION);
    req.set_include_sketch(true);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    if (by_session) {
      analysis::SetWindows(resp, arm);
    } else {
      analysis::SetMergedLatency(resp, arm);
    }
  }
  ASSIGN_OR_RETURN(const opmap::v1::PowerResponse power, FetchPower(client, q));
  const analysis::HardwareEnvelope* envelope = q.envelope;
  if (envelope != nullptr) {
    out.envelope = *envelope;
    out.envelope_source = "given: " + envelope->name;
  } else if (q.envelope_from_gpu) {
    std::set<std::string> names;
    for (const opmap::v1::PowerRow& row : power.rows()) {
      if (row.domain() == opmap::v1::POWER_DOMAIN_GPU && !row.name().empty()) names.insert(row.name());
    }
    if (names.size() == 1) {
      out.envelope = analysis::EnvelopeForGpuName(*names.begin());
      out.envelope_source = out.envelope ? absl::StrCat("built-in for '", *names.begin(), "'")
                                         : analysis::NoEnvelopeMessage(*names.begin());
    } else {
      out.envelope_source = names.empty() ? "the arm's windows name no GPU (no power rows)"
                                          : absl::StrCat("the arm's windows ran on ", names.size(),
                                                         " GPU models; give --gpu or --envelope");
    }
    if (out.envelope) envelope = &*out.envelope;
  }
  // The sessions' revisions first: the profile's per-revision precision picks the peak.
  RETURN_IF_ERROR(FetchResourceInputs(client, q, arm));
  analysis::SetThroughputAndMfu(q.profile, envelope, arm);
  if (envelope == nullptr && !out.envelope_source.empty()) {
    auto it = arm.unavailable.find("mfu");
    if (it != arm.unavailable.end()) absl::StrAppend(&it->second, " (", out.envelope_source, ")");
  }
  if (!out.envelope_source.empty()) arm.inputs["envelope.source"] = out.envelope_source;
  analysis::SetPower(power, q.profile, arm);
  RETURN_IF_ERROR(FetchLayers(client, q, arm));
  RETURN_IF_ERROR(FetchTails(client, q, arm));
  RETURN_IF_ERROR(FetchStallShare(client, q, arm));
  arm.unavailable["errors"] =
      "the sessions carry no request error counts (opmap records ranges, not request outcomes)";

  // Reproducibility: what was selected and from where.
  analysis::ArmSelection selection;
  {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.add_group_by(opmap::v1::GROUP_BY_HOST);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(CallQuery(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    for (const auto& row : resp.rows()) {
      if (row.key_size() > 0) selection.hosts.push_back(row.key(0));
    }
  }
  selection.model = q.filter.model();
  selection.opmap_version = std::string(opmap::Version());
  selection.profile = q.profile;
  selection.envelope = envelope;
  analysis::SetReproducibilityInputs(selection, arm);
  return out;
}

}  // namespace opmap::cli
