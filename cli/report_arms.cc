#include "cli/report_arms.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <simdjson.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "common/base/status_macros.h"
#include "analysis/stats/ddsketch.h"
#include "opmap/v1/query.grpc.pb.h"
#include "common/version/version.h"

namespace opmap::cli {
namespace {

using analysis::Arm;
using analysis::ArmWindow;
using analysis::LayerTime;

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

// "what1, what2: reason; what3: reason2": one entry per distinct reason, so five counters
// that failed for the same missing PMU read as one line.
std::string Reasons(const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list) {
  std::vector<std::pair<std::string, std::string>> groups;  // reason, whats
  for (const auto& u : list) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == u.reason(); });
    if (it == groups.end()) {
      groups.push_back({u.reason(), u.what()});
    } else {
      absl::StrAppend(&it->second, ", ", u.what());
    }
  }
  std::string out;
  for (const auto& [reason, whats] : groups) {
    if (!out.empty()) out += "; ";
    absl::StrAppend(&out, whats, ": ", reason);
  }
  return out;
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

std::optional<double> Quantile(const opmap::v1::LatencyRow& row, int i) {
  if (i >= row.quantile_ns_size()) return std::nullopt;
  return row.quantile_ns(i);
}

double Seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// Per layer: module (or layer type when no module was recorded) → Σ operator time.
// Operator rows that are module ranges themselves (the demo's decoder_layer.N, forward)
// are left out: their time is their children's, counted already.
absl::Status FetchLayers(CollectorChannel& client, const ArmQuery& q, Arm& arm) {
  for (opmap::v1::LatencySubject subject :
       {opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU, opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU}) {
    for (opmap::v1::GroupBy layer_key : {opmap::v1::GROUP_BY_MODULE, opmap::v1::GROUP_BY_LAYER_TYPE}) {
      opmap::v1::LatencyRequest req = LatencyRequestFor(q, subject);
      req.add_group_by(layer_key);
      req.add_group_by(opmap::v1::GROUP_BY_OPERATOR);
      opmap::v1::LatencyResponse resp;
      absl::Status st = Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
        return s.LatencyPercentiles(&c, req, &resp);
      });
      if (!st.ok()) return st;
      std::set<std::string> modules;
      bool any_layer = false;
      for (const auto& row : resp.rows()) {
        if (!row.key(0).empty()) any_layer = true;
        modules.insert(row.key(0));
      }
      if (resp.rows_size() == 0) break;  // this subject has no rows: try the next one
      if (!any_layer) continue;          // no modules recorded: group by layer type
      struct Acc {
        double ns = 0;
        std::string top;
        double top_ns = 0;
      };
      std::map<std::string, Acc> layers;
      for (const auto& row : resp.rows()) {
        const std::string& layer = row.key(0);
        const std::string& op = row.key(1);
        if (layer_key == opmap::v1::GROUP_BY_MODULE && modules.count(op) > 0) continue;
        Acc& a = layers[layer.empty() ? "(outside modules)" : layer];
        a.ns += static_cast<double>(row.sum_ns());
        if (static_cast<double>(row.sum_ns()) > a.top_ns) {
          a.top_ns = static_cast<double>(row.sum_ns());
          a.top = op;
        }
      }
      const double requests = static_cast<double>(std::max<uint64_t>(arm.requests, 1));
      for (const auto& [name, a] : layers) {
        LayerTime t;
        t.layer = name;
        t.top_operator = a.top;
        t.ns_per_request = a.ns / requests;
        t.top_operator_ns_per_request = a.top_ns / requests;
        arm.layers.push_back(std::move(t));
      }
      arm.inputs["layers.basis"] = absl::StrCat(
          subject == opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU ? "operator GPU time"
                                                             : "operator host time (inclusive)",
          " by ", layer_key == opmap::v1::GROUP_BY_MODULE ? "module" : "layer type",
          ", per request");
      return absl::OkStatus();
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
  std::optional<double> mem, total;
  for (const auto& row : resp.rows()) {
    if (!row.has_scaled()) continue;
    if (row.name() == "PAPI_MEM_SCY") mem = row.scaled();
    if (row.name() == "PAPI_TOT_CYC") total = row.scaled();
  }
  if (mem && total && *total > 0) {
    arm.memory_stall_share = *mem / *total;
    arm.inputs["memory_stall_share.basis"] = "CPU: PAPI_MEM_SCY / PAPI_TOT_CYC";
    return absl::OkStatus();
  }
  std::string why = "no PAPI_MEM_SCY and PAPI_TOT_CYC counters were collected";
  if (resp.unavailable_size() > 0) absl::StrAppend(&why, " (", Reasons(resp.unavailable()), ")");
  absl::StrAppend(&why, "; GPU warp-stall samples are not kept by the collector");
  arm.unavailable["memory_stall_share"] = why;
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

std::vector<analysis::WeightedValue> SketchSamples(const opmap::v1::Sketch& sketch) {
  std::vector<analysis::WeightedValue> out;
  if (sketch.zero_count() > 0) out.push_back({0.0, sketch.zero_count()});
  absl::StatusOr<stats::DDSketch> shape = stats::DDSketch::WithScale(sketch.scale());
  if (!shape.ok()) return out;
  for (int k = 0; k < sketch.counts_size(); ++k) {
    if (sketch.counts(k) == 0) continue;
    double v = shape->BinValue(sketch.offset() + k);
    // The representative may fall outside the exact range at the ends; clamp as
    // Quantile does, so ranks agree with the percentiles shown.
    v = std::clamp(v, sketch.min(), sketch.max());
    out.push_back({v, sketch.counts(k)});
  }
  return out;
}

absl::StatusOr<Arm> FetchArm(CollectorChannel& client, const ArmQuery& q) {
  Arm arm;
  arm.revision = q.revision;

  // Windows: one per capture session.
  {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.add_group_by(opmap::v1::GROUP_BY_SESSION);
    req.set_include_sketch(true);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    if (resp.rows_size() == 0) {
      arm.unavailable["latency"] =
          resp.unavailable_size() > 0 ? Reasons(resp.unavailable())
                                      : "no complete session of this revision holds requests";
    }
    for (const auto& row : resp.rows()) {
      ArmWindow w;
      w.id = row.key(0);
      w.start_ns = row.window_start_ns();
      w.end_ns = row.window_end_ns();
      w.requests = row.count();
      w.p50_ns = Quantile(row, 0);
      w.p95_ns = Quantile(row, 1);
      w.p99_ns = Quantile(row, 2);
      w.latencies_ns = SketchSamples(row.sketch());
      arm.windows.push_back(std::move(w));
    }
    std::sort(arm.windows.begin(), arm.windows.end(),
              [](const ArmWindow& a, const ArmWindow& b) { return a.start_ns < b.start_ns; });
  }
  // The whole arm, merged exactly by the collector.
  {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.set_include_sketch(true);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    if (resp.rows_size() == 1) {
      const auto& row = resp.rows(0);
      arm.requests = row.count();
      arm.p50_ns = Quantile(row, 0);
      arm.p95_ns = Quantile(row, 1);
      arm.p99_ns = Quantile(row, 2);
      arm.relative_accuracy = row.relative_accuracy();
      arm.latencies_ns = SketchSamples(row.sketch());
    }
  }
  // Throughput and model FLOP/s per window: requests completed in the window over its
  // length; FLOPs per request from the workload profile.
  std::string flops_basis;
  std::optional<double> flops_per_request;
  if (q.profile != nullptr) flops_per_request = ModelFlopsPerRequest(*q.profile, &flops_basis);
  std::optional<double> peak;
  if (q.envelope != nullptr && q.profile != nullptr) {
    peak = q.envelope->PeakFlopsPerS(q.profile->PrecisionOf(q.revision));
  }
  const double devices = q.profile != nullptr ? static_cast<double>(q.profile->devices) : 1;
  double window_seconds = 0;
  for (ArmWindow& w : arm.windows) {
    const double s = Seconds(w.end_ns - w.start_ns);
    if (s <= 0) continue;
    window_seconds += s;
    if (flops_per_request) {
      w.achieved_flops_per_s = static_cast<double>(w.requests) * *flops_per_request / s;
      if (peak) w.mfu = *w.achieved_flops_per_s / (devices * *peak);
    }
  }
  if (window_seconds > 0) {
    double requests = 0;
    for (const ArmWindow& w : arm.windows) requests += static_cast<double>(w.requests);
    arm.throughput_rps = requests / window_seconds;
    if (flops_per_request) {
      arm.achieved_flops_per_s = *arm.throughput_rps * *flops_per_request;
      if (peak) arm.mfu = *arm.achieved_flops_per_s / (devices * *peak);
    }
  } else if (!arm.windows.empty()) {
    arm.unavailable["throughput"] = "the sessions carry no capture window times";
  }
  if (q.profile == nullptr) {
    arm.unavailable["mfu"] = "no workload profile (--profile FILE): model FLOPs unknown";
    arm.unavailable["achieved_flops_per_s"] = arm.unavailable["mfu"];
  } else if (!flops_per_request) {
    arm.unavailable["mfu"] = flops_basis;
    arm.unavailable["achieved_flops_per_s"] = flops_basis;
  } else {
    arm.inputs["mfu.flops_per_request"] = flops_basis;
    if (q.envelope == nullptr) {
      arm.unavailable["mfu"] =
          "no hardware envelope (--envelope FILE or --gpu NAME): MFU needs the peak FLOP/s; "
          "the achieved FLOP/s is compared instead";
    } else if (!peak) {
      arm.unavailable["mfu"] = absl::StrCat(
          "the envelope ", q.envelope->name, " has no ",
          std::string(analysis::PrecisionName(q.profile->PrecisionOf(q.revision))), " peak");
    }
  }
  RETURN_IF_ERROR(FetchLayers(client, q, arm));
  RETURN_IF_ERROR(FetchResourceInputs(client, q, arm));
  RETURN_IF_ERROR(FetchStallShare(client, q, arm));
  arm.unavailable["errors"] =
      "the sessions carry no request error counts (opmap records ranges, not request outcomes)";

  // Reproducibility: what was selected and from where.
  {
    opmap::v1::LatencyRequest req = LatencyRequestFor(q, opmap::v1::LATENCY_SUBJECT_REQUEST);
    req.add_group_by(opmap::v1::GROUP_BY_HOST);
    opmap::v1::LatencyResponse resp;
    RETURN_IF_ERROR(Call(client, "LatencyPercentiles", [&](Stub& s, grpc::ClientContext& c) {
      return s.LatencyPercentiles(&c, req, &resp);
    }));
    std::string hosts;
    for (const auto& row : resp.rows()) {
      if (!hosts.empty()) hosts += ",";
      hosts += row.key(0);
    }
    arm.inputs["hosts"] = hosts;
  }
  arm.inputs["revision"] = q.revision;
  arm.inputs["opmap_version.report"] = std::string(opmap::Version());
  if (!q.filter.model().empty()) arm.inputs["model"] = q.filter.model();
  arm.inputs["windows"] = std::to_string(arm.windows.size());
  if (!arm.windows.empty()) {
    arm.inputs["first_window_start_ns"] = std::to_string(arm.windows.front().start_ns);
    arm.inputs["last_window_end_ns"] = std::to_string(arm.windows.back().end_ns);
  }
  if (q.envelope != nullptr) {
    arm.inputs["envelope"] = q.envelope->name;
    arm.inputs["power_mode"] = q.envelope->power_mode.empty() ? "not given" : q.envelope->power_mode;
  }
  if (q.profile != nullptr) {
    if (!q.profile->seed.empty()) arm.inputs["seed"] = q.profile->seed;
    arm.inputs["precision"] = std::string(analysis::PrecisionName(q.profile->PrecisionOf(q.revision)));
  }
  return arm;
}

}  // namespace opmap::cli
