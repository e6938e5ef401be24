#include "collector/query_service.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/base/status_macros.h"
#include "analysis/bottleneck/mitigations.h"
#include "analysis/report/chrome_trace.h"
#include "analysis/summary/request_breakdown.h"
#include "common/text/printable.h"
#include "analysis/wire/batch_codec.h"
#include "collector/auth_first.h"

namespace opmap::collector {
namespace {

// What ExportTrace needs of a stored batch before loading its session: the identity
// and the resource, read without decoding the event columns.
struct BatchHeader {
  std::string agent_id;
  std::string session_id;
  opmap::v1::Resource resource;
};

bool ParseHeader(std::string_view payload, BatchHeader* h) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                                            static_cast<int>(payload.size()));
  for (;;) {
    uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(payload.size());
    const int field = static_cast<int>(tag >> 3);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (delimited && (field == 1 || field == 2)) {
      if (!WireFormatLite::ReadBytes(&in, field == 1 ? &h->agent_id : &h->session_id)) return false;
    } else if (delimited && field == 4) {
      if (!WireFormatLite::ReadMessage(&in, &h->resource)) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
}

std::string SessionLabel(const BatchHeader& h) {
  std::vector<std::string> parts;
  if (!h.resource.host().empty()) parts.push_back(h.resource.host());
  if (!h.resource.model_name().empty()) {
    parts.push_back(h.resource.model_revision().empty()
                        ? h.resource.model_name()
                        : absl::StrCat(h.resource.model_name(), "@", h.resource.model_revision()));
  }
  parts.push_back(absl::StrCat("[", h.agent_id, "/", h.session_id, "]"));
  return absl::StrJoin(parts, " ");
}

grpc::Status Reply(const absl::Status& status) { return ToGrpcStatus(status); }

// The request and response types of a unary service method.
template <typename M>
struct MethodTraits;
template <typename C, typename Req, typename Resp>
struct MethodTraits<grpc::Status (C::*)(grpc::ServerContext*, const Req*, Resp*)> {
  using Request = Req;
  using Response = Resp;
};

}  // namespace

absl::Status ValidateTimeRange(const opmap::v1::TimeRange& range, bool has_range) {
  if (!has_range || (range.start_ns() == 0 && range.end_ns() == 0)) return absl::OkStatus();
  if (range.end_ns() <= range.start_ns()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("range.end_ns (%d) must be greater than range.start_ns (%d)",
                        range.end_ns(), range.start_ns()));
  }
  return absl::OkStatus();
}

absl::Status ExportTraceChunks(Store& store, const opmap::v1::ExportTraceRequest& request,
                               const QueryOptions& options,
                               const std::function<bool(const opmap::v1::TraceChunk&)>& write) {
  RETURN_IF_ERROR(ValidateTimeRange(request.range(), request.has_range()));
  uint64_t max_events = request.max_events() == 0 ? options.default_max_events
                                                  : request.max_events();
  if (max_events > options.max_events_limit) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_events: %d is over the collector's limit of %d", max_events,
        options.max_events_limit));
  }

  // Pass 1: which sessions the range and filter select, in the store's order.
  std::vector<BatchHeader> sessions;
  absl::flat_hash_set<std::pair<std::string, std::string>> seen;
  RETURN_IF_ERROR(store.ForEachBatch(
      request.range(), request.filter(), [&](std::string_view payload) -> absl::Status {
        BatchHeader h;
        if (!ParseHeader(payload, &h)) return absl::DataLossError("store: a stored batch does not parse");
        if (!request.agent_id().empty() && h.agent_id != request.agent_id()) return absl::OkStatus();
        if (!request.session_id().empty() && h.session_id != request.session_id()) {
          return absl::OkStatus();
        }
        if (seen.insert({h.agent_id, h.session_id}).second) sessions.push_back(std::move(h));
        return absl::OkStatus();
      }));

  if (request.has_request_id()) {
    if (request.session_id().empty()) {
      return absl::InvalidArgumentError("request_id: needs session_id (a request of one session)");
    }
    if (sessions.size() != 1) {
      return absl::NotFoundError(absl::StrFormat(
          "request_id: the selection holds %d sessions with id %s; give agent_id too",
          sessions.size(), request.session_id()));
    }
  }

  // Pass 2: each session whole (its string table starts in its first batch), rendered
  // with the time filter.
  bool stopped = false;
  auto send = [&](std::string_view data, bool last, const analysis::ChromeTraceWriter* w) {
    do {
      size_t n = std::min(data.size(), options.chunk_bytes);
      opmap::v1::TraceChunk chunk;
      chunk.set_data(data.data(), n);
      data.remove_prefix(n);
      if (last && data.empty()) {
        chunk.set_last(true);
        chunk.set_events(w->events());
        chunk.set_truncated(w->truncated());
      }
      if (!write(chunk)) {
        stopped = true;
        return false;
      }
    } while (!data.empty());
    return true;
  };
  analysis::ChromeTraceOptions render;
  render.max_events = max_events;
  if (request.has_range() && !(request.range().start_ns() == 0 && request.range().end_ns() == 0)) {
    render.start_ns = request.range().start_ns();
    render.end_ns = request.range().end_ns();
  }
  render.flush_bytes = options.chunk_bytes > (256 << 10) ? options.chunk_bytes - (128 << 10)
                                                         : options.chunk_bytes;
  analysis::ChromeTraceWriter* writer_ptr = nullptr;

  analysis::BatchLimits unlimited;
  unlimited.max_records = SIZE_MAX;
  unlimited.max_new_strings = SIZE_MAX;
  unlimited.max_string_bytes = SIZE_MAX;
  auto assemble = [&](const BatchHeader& h, analysis::SessionAssembler& assembler) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<std::string> payloads,
                     store.LoadSessionPayloads(h.agent_id, h.session_id));
    opmap::v1::Batch batch;
    for (const std::string& payload : payloads) {
      if (!batch.ParseFromString(payload)) {
        return absl::DataLossError(absl::StrFormat(
            "store: a stored batch of session %s/%s does not parse", h.agent_id, h.session_id));
      }
      if (absl::Status s = assembler.Append(batch, unlimited); !s.ok()) {
        return absl::DataLossError(absl::StrFormat("store: stored batch seq %d of session %s/%s: %s",
                                                   batch.seq(), h.agent_id, h.session_id,
                                                   s.message()));
      }
    }
    return absl::OkStatus();
  };
  // One request: its extent is the time filter (the session is assembled once, here).
  std::unique_ptr<analysis::SessionAssembler> held;
  if (request.has_request_id()) {
    held = std::make_unique<analysis::SessionAssembler>();
    RETURN_IF_ERROR(assemble(sessions.front(), *held));
    ASSIGN_OR_RETURN(const analysis::RequestRecord r,
                     analysis::FindRequest(held->trace(), request.request_id()));
    render.start_ns = r.start_ns;
    render.end_ns = r.start_ns + r.extent_ns + 1;
  }
  analysis::ChromeTraceWriter writer(
      render, [&](std::string_view data) { return send(data, false, writer_ptr); });
  writer_ptr = &writer;

  for (const BatchHeader& h : sessions) {
    if (writer.truncated()) break;
    analysis::SessionAssembler fresh;
    analysis::SessionAssembler& assembler = held ? *held : fresh;
    if (!held) RETURN_IF_ERROR(assemble(h, assembler));
    analysis::ChromeTraceSource source;
    source.label = SessionLabel(h);
    source.default_pid = h.resource.pid();
    for (const auto& [key, value] :
         std::initializer_list<std::pair<const char*, const std::string*>>{
             {"host", &h.resource.host()},
             {"model", &h.resource.model_name()},
             {"revision", &h.resource.model_revision()},
             {"framework", &h.resource.framework()},
             {"framework_version", &h.resource.framework_version()},
             {"compiler", &h.resource.compiler()},
             {"compiler_version", &h.resource.compiler_version()},
             {"cuda_runtime_version", &h.resource.cuda_runtime_version()},
             {"driver_version", &h.resource.driver_version()},
             {"cupti_version", &h.resource.cupti_version()},
             {"agent_version", &h.resource.agent_version()}}) {
      if (!value->empty()) source.resource.emplace_back(key, *value);
    }
    // Job labels (and the agent's platform labels), so a client can list an arm key's
    // values (opmap report --arms KEY).
    std::vector<std::pair<std::string, std::string>> labels(h.resource.labels().begin(),
                                                            h.resource.labels().end());
    std::sort(labels.begin(), labels.end());
    for (auto& [k, v] : labels) source.resource.emplace_back("label." + k, std::move(v));
    for (const opmap::v1::Gpu& gpu : h.resource.gpus()) {
      if (gpu.device() >= 1024) continue;
      if (source.gpu_names.size() <= gpu.device()) source.gpu_names.resize(gpu.device() + 1);
      source.gpu_names[gpu.device()] = gpu.name();
    }
    if (!writer.Add(assembler.trace(), source)) break;
  }
  if (stopped) return absl::CancelledError("the reader went away");
  std::string tail = writer.Finish();
  send(tail, true, &writer);
  if (stopped) return absl::CancelledError("the reader went away");
  return absl::OkStatus();
}

QueryService::QueryService(Store* store, const Authenticator* auth, CollectorMetrics* metrics,
                           QueryOptions options)
    : store_(store),
      auth_(auth),
      metrics_(metrics),
      options_(options),
      queries_("Query calls", "--max-queries", options.max_queries, "--max-queries-per-token",
               options.max_queries_per_token),
      exports_("trace exports", "--max-exports", options.max_exports,
               "--max-exports-per-token", options.max_exports_per_token) {
  // Every method checks the token and takes its admission before its request is read
  // (auth_first.h); the methods check the token again, so that they stay safe when
  // called directly.
  using namespace opmap::v1;  // NOLINT: the request and response types
  auto admit = [this](grpc::ServerContext* context, std::vector<CallAdmission::Ticket>* held,
                      bool is_export) {
    Principal principal;
    grpc::Status status = Authorize(context, &principal);
    if (status.ok() && options_.health != nullptr) {
      status = ToGrpcStatus(options_.health->Check(
          absl::StatusCode::kDataLoss, "queries are refused rather than answered from it"));
    }
    if (!status.ok()) return status;
    for (CallAdmission* kind : {&queries_, is_export ? &exports_ : nullptr}) {
      if (kind == nullptr) continue;
      absl::StatusOr<CallAdmission::Ticket> ticket = kind->Admit(principal.name);
      if (!ticket.ok()) {
        metrics_->calls_refused.fetch_add(1, std::memory_order_relaxed);
        return ToGrpcStatus(ticket.status());
      }
      held->push_back(*std::move(ticket));
    }
    return grpc::Status::OK;
  };
  auto gate = [&](bool is_export) {
    CallGate g;
    g.admit = [admit, is_export](grpc::ServerContext* c, std::vector<CallAdmission::Ticket>* h) {
      return admit(c, h, is_export);
    };
    g.watchdog = options_.watchdog;
    g.body_timeout = options_.request_body_timeout;
    return g;
  };
  auto unary = [&](int index, auto method) {
    using Traits = MethodTraits<decltype(method)>;
    MarkMethodStreamed(index, AuthorizeThenServeUnary<typename Traits::Request,
                                                      typename Traits::Response>(
                                  gate(false), [this, method](auto* c, auto* q, auto* r) {
                                    return (this->*method)(c, q, r);
                                  }));
  };
  unary(0, &QueryService::LatencyPercentiles);
  unary(1, &QueryService::TimeBreakdown);
  unary(2, &QueryService::TopKernels);
  unary(3, &QueryService::Counters);
  MarkMethodStreamed(
      4, AuthorizeThenServeStream<ExportTraceRequest, TraceChunk>(
             gate(true), [this](grpc::ServerContext* c, const ExportTraceRequest* q,
                                const std::function<bool(const TraceChunk&)>& write) {
               return Reply(ExportTraceChunks(*store_, *q, options_, [&](const TraceChunk& chunk) {
                 // A reader that stops reading is cut off, not buffered for.
                 std::optional<CallWatchdog::Arm> arm;
                 if (options_.watchdog != nullptr) {
                   arm.emplace(options_.watchdog->Watch(c, options_.write_timeout));
                 }
                 return !c->IsCancelled() && write(chunk);
               }));
             }));
  unary(5, &QueryService::RecordSignoff);
  unary(6, &QueryService::ListSignoffs);
  unary(7, &QueryService::Power);
}

grpc::Status QueryService::Authorize(grpc::ServerContext* context, Principal* principal) {
  grpc::Status status = auth_->Authorize(context, Permission::kQuery, principal);
  if (!status.ok()) metrics_->auth_failures.fetch_add(1, std::memory_order_relaxed);
  return status;
}

grpc::Status QueryService::LatencyPercentiles(grpc::ServerContext* context,
                                              const opmap::v1::LatencyRequest* request,
                                              opmap::v1::LatencyResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  if (absl::Status s = ValidateTimeRange(request->range(), request->has_range()); !s.ok()) {
    return Reply(s);
  }
  for (int i = 0; i < request->quantiles_size(); ++i) {
    double q = request->quantiles(i);
    if (!(q >= 0.0 && q <= 1.0)) {
      return Reply(absl::InvalidArgumentError(
          absl::StrFormat("quantiles[%d]: %g is outside [0, 1]", i, q)));
    }
  }
  for (int i = 0; i < request->group_by_size(); ++i) {
    if (request->group_by(i) == opmap::v1::GROUP_BY_UNSPECIFIED ||
        !opmap::v1::GroupBy_IsValid(request->group_by(i))) {
      return Reply(absl::InvalidArgumentError(
          absl::StrFormat("group_by[%d]: %d is not a grouping", i, request->group_by(i))));
    }
  }
  absl::StatusOr<opmap::v1::LatencyResponse> result = store_->QueryLatency(*request);
  if (!result.ok()) return Reply(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

grpc::Status QueryService::TimeBreakdown(grpc::ServerContext* context,
                                         const opmap::v1::TimeBreakdownRequest* request,
                                         opmap::v1::TimeBreakdownResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  if (absl::Status s = ValidateTimeRange(request->range(), request->has_range()); !s.ok()) {
    return Reply(s);
  }
  absl::StatusOr<opmap::v1::TimeBreakdownResponse> result = store_->QueryTimeBreakdown(*request);
  if (!result.ok()) return Reply(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

grpc::Status QueryService::TopKernels(grpc::ServerContext* context,
                                      const opmap::v1::TopKernelsRequest* request,
                                      opmap::v1::TopKernelsResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  if (absl::Status s = ValidateTimeRange(request->range(), request->has_range()); !s.ok()) {
    return Reply(s);
  }
  absl::StatusOr<opmap::v1::TopKernelsResponse> result = store_->QueryTopKernels(*request);
  if (!result.ok()) return Reply(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

grpc::Status QueryService::Counters(grpc::ServerContext* context,
                                    const opmap::v1::CountersRequest* request,
                                    opmap::v1::CountersResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  if (absl::Status s = ValidateTimeRange(request->range(), request->has_range()); !s.ok()) {
    return Reply(s);
  }
  absl::StatusOr<opmap::v1::CountersResponse> result = store_->QueryCounters(*request);
  if (!result.ok()) return Reply(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

grpc::Status QueryService::Power(grpc::ServerContext* context,
                                 const opmap::v1::PowerRequest* request,
                                 opmap::v1::PowerResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  if (absl::Status s = ValidateTimeRange(request->range(), request->has_range()); !s.ok()) {
    return Reply(s);
  }
  absl::StatusOr<opmap::v1::PowerResponse> result = store_->QueryPower(*request);
  if (!result.ok()) return Reply(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

grpc::Status QueryService::ExportTrace(grpc::ServerContext* context,
                                       const opmap::v1::ExportTraceRequest* request,
                                       grpc::ServerWriter<opmap::v1::TraceChunk>* writer) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  absl::Status status = ExportTraceChunks(
      *store_, *request, options_, [&](const opmap::v1::TraceChunk& chunk) {
        return !context->IsCancelled() && writer->Write(chunk);
      });
  return Reply(status);
}

namespace {

// Printable text of at most 200 bytes: names shown in reports, never paths.
absl::Status CheckName(const char* field, const std::string& v, bool required) {
  if (required && v.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: empty", field));
  if (v.size() > 200) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: longer than 200 bytes", field));
  }
  for (unsigned char c : v) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: control character", field));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSignoff(const opmap::v1::Signoff& s) {
  if (s.report_sha256().size() != 64 ||
      s.report_sha256().find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::InvalidArgumentError("report_sha256: expected 64 lowercase hex digits");
  }
  if (s.kind() != "release" && s.kind() != "handoff" && s.kind() != "fit") {
    return absl::InvalidArgumentError(
        absl::StrFormat("kind: '%s' (expected release, handoff or fit)", s.kind()));
  }
  RETURN_IF_ERROR(CheckName("owner", s.owner(), true));
  RETURN_IF_ERROR(CheckName("role", s.role(), true));
  // One of the three owner roles, by its name (the CLI sends it so): any other text would
  // sign a report for a role nobody owns.
  if (std::optional<analysis::OwnerRole> role = analysis::ParseOwnerRole(s.role());
      !role || analysis::OwnerRoleName(*role) != s.role()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "role: '%s' (expected ML compiler engineer, runtime systems engineer or performance "
        "modeling owner)",
        text::Printable(s.role())));
  }
  RETURN_IF_ERROR(CheckName("baseline", s.baseline(), s.kind() == "release"));
  RETURN_IF_ERROR(CheckName("candidate", s.candidate(), true));
  return CheckName("verdict", s.verdict(), false);
}

}  // namespace

grpc::Status QueryService::RecordSignoff(grpc::ServerContext* context,
                                         const opmap::v1::Signoff* request,
                                         opmap::v1::RecordSignoffResponse* response) {
  Principal principal;
  if (grpc::Status s = Authorize(context, &principal); !s.ok()) return s;
  if (absl::Status s = ValidateSignoff(*request); !s.ok()) return Reply(s);
  opmap::v1::Signoff signoff = *request;
  signoff.set_signed_ns(absl::ToUnixNanos(absl::Now()));
  signoff.set_principal(principal.name);
  absl::StatusOr<Store::SignoffOutcome> stored = store_->RecordSignoff(signoff);
  if (!stored.ok()) return Reply(stored.status());
  response->set_already_recorded(stored->already);
  *response->mutable_signoff() = std::move(stored->stored);
  return grpc::Status::OK;
}

grpc::Status QueryService::ListSignoffs(grpc::ServerContext* context,
                                        const opmap::v1::ListSignoffsRequest* request,
                                        opmap::v1::ListSignoffsResponse* response) {
  if (grpc::Status s = Authorize(context); !s.ok()) return s;
  absl::StatusOr<std::vector<opmap::v1::Signoff>> list = store_->ListSignoffs(*request);
  if (!list.ok()) return Reply(list.status());
  for (auto& s : *list) *response->add_signoffs() = std::move(s);
  return grpc::Status::OK;
}

}  // namespace opmap::collector
