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
#include "opmap/v1/query.grpc.pb.h"
#include "common/version/version.h"

namespace opmap::cli {
namespace {

using analysis::Arm;

using Stub = opmap::v1::Query::Stub;

// One unary Query call with failover; a failure names the RPC and the collector.
template <typename Fn>
absl::Status Call(CollectorChannel& client, const char* rpc, Fn fn) {
  std::string endpoint;
  grpc::Status s = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return fn(*opmap::v1::Query::NewStub(ch), ctx);
      },
      &endpoint);
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(rpc, ": ", s.error_message(), " (collector ", endpoint, ")"));
}

opmap::v1::LatencyRequest LatencyRequestFor(const ArmQuery& q, opmap::v1::LatencySubject subject) {
  opmap::v1::LatencyRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.mutable_filter()->set_revision(q.revision);
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
      RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
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
  req.mutable_filter()->set_revision(q.revision);
  opmap::v1::CountersResponse resp;
  RETURN_IF_ERROR(Call(client, "Counters", [&](Stub& s, grpc::ClientContext& c) {
    return s.Counters(&c, req, &resp);
  }));
  analysis::SetStallShare(resp, arm);
  return absl::OkStatus();
}

// GPU power per window (Power grouped by session): perf per watt and the power mode.
absl::Status FetchPower(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  opmap::v1::PowerRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.mutable_filter()->set_revision(q.revision);
  req.add_group_by(opmap::v1::GROUP_BY_SESSION);
  req.set_limit(100000);
  opmap::v1::PowerResponse resp;
  RETURN_IF_ERROR(Call(client, "Power", [&](Stub& s, grpc::ClientContext& c) {
    return s.Power(&c, req, &resp);
  }));
  analysis::SetPower(resp, q.profile, arm);
  return absl::OkStatus();
}

// Framework, compiler, CUDA and driver versions of the arm's sessions: the collector's
// ExportTrace writes each session's Resource as an `opmap_resource` metadata event, so one
// event per session is enough. Values that differ between sessions are all listed.
absl::Status FetchResourceInputs(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  opmap::v1::ExportTraceRequest req;
  if (q.has_range) *req.mutable_range() = q.range;
  *req.mutable_filter() = q.filter;
  req.mutable_filter()->set_revision(q.revision);
  req.set_max_events(1);
  std::string doc;
  RETURN_IF_ERROR(Call(client, "ExportTrace", [&](Stub& s, grpc::ClientContext& c) {
    doc.clear();
    std::unique_ptr<grpc::ClientReader<opmap::v1::TraceChunk>> reader = s.ExportTrace(&c, req);
    opmap::v1::TraceChunk chunk;
    while (reader->Read(&chunk)) doc += chunk.data();
    return reader->Finish();
  }));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(doc).get(root) != simdjson::SUCCESS) {
    return absl::DataLossError("ExportTrace: the collector's document does not parse");
  }
  simdjson::dom::array events;
  if (root["traceEvents"].get(events) != simdjson::SUCCESS) return absl::OkStatus();
  std::map<std::string, std::set<std::string>> values;
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
  for (const auto& [key, set] : values) {
    if (key == "host" || key == "revision") continue;  // listed from the rollups already
    std::string joined;
    for (const std::string& v : set) joined += (joined.empty() ? "" : ",") + v;
    arm.inputs[key] = joined;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Arm> FetchArm(CollectorChannel& client, const ArmQuery& q) {
  Arm arm;
  arm.revision = q.revision;
  // Windows: one per capture session; then the whole arm, merged exactly by the collector.
  for (bool by_session : {true, false}) {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    if (by_session) req.add_group_by(opmap::v1::GROUP_BY_SESSION);
    req.set_include_sketch(true);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    if (by_session) {
      analysis::SetWindows(resp, arm);
    } else {
      analysis::SetMergedLatency(resp, arm);
    }
  }
  analysis::SetThroughputAndMfu(q.profile, q.envelope, arm);
  RETURN_IF_ERROR(FetchLayers(client, q, arm));
  RETURN_IF_ERROR(FetchResourceInputs(client, q, arm));
  RETURN_IF_ERROR(FetchStallShare(client, q, arm));
  RETURN_IF_ERROR(FetchPower(client, q, arm));
  arm.unavailable["errors"] =
      "the sessions carry no request error counts (opmap records ranges, not request outcomes)";

  // Reproducibility: what was selected and from where.
  analysis::ArmSelection selection;
  {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.add_group_by(opmap::v1::GROUP_BY_HOST);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    for (const auto& row : resp.rows()) {
      if (row.key_size() > 0) selection.hosts.push_back(row.key(0));
    }
  }
  selection.model = q.filter.model();
  selection.opmap_version = std::string(opmap::Version());
  selection.profile = q.profile;
  selection.envelope = q.envelope;
  analysis::SetReproducibilityInputs(selection, arm);
  return arm;
}

}  // namespace opmap::cli
