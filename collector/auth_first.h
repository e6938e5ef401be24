// Authorize before the request body is read.
//
// Why: gRPC's ordinary unary handler receives the whole request message before the
// service method runs, so an unauthenticated caller could make the collector buffer a
// 64 MiB body just to be refused (8 such calls took it past 1 GB). Registering a unary
// method as "streamed unary" lets the handler check the call's metadata first and read
// the body only for an authorized caller; a refused call ends with the body unread, so
// at most the HTTP/2 flow-control window of it is ever held. The same check takes the
// call's admission slots (a token's share of the threads), and the body gets a deadline.
#ifndef OPMAP_COLLECTOR_AUTH_FIRST_H_
#define OPMAP_COLLECTOR_AUTH_FIRST_H_

#include <functional>
#include <optional>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/method_handler.h>
#include <grpcpp/support/status.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collector/call_admission.h"
#include "collector/call_watchdog.h"

namespace opmap::collector {

// What a handler does before it reads the request. `admit` checks the caller (its
// metadata only) and takes the call's admission slots (call_admission.h), which `*held`
// keeps until the call ends; a refusal is returned as it is, the body unread. The body
// must then arrive within `body_timeout` (call_watchdog.h; no deadline without one).
struct CallGate {
  std::function<grpc::Status(grpc::ServerContext*, std::vector<CallAdmission::Ticket>* held)>
      admit;
  CallWatchdog* watchdog = nullptr;
  absl::Duration body_timeout = absl::Seconds(10);
};

// Reads the request under the gate's deadline: INVALID_ARGUMENT when it does not parse,
// DEADLINE_EXCEEDED when it did not come in time.
template <class Stream, class Request>
grpc::Status ReadRequest(const CallGate& gate, grpc::ServerContext* context, Stream* stream,
                         Request* request) {
  std::optional<CallWatchdog::Arm> arm;
  if (gate.watchdog != nullptr) arm.emplace(gate.watchdog->Watch(context, gate.body_timeout));
  if (stream->Read(request)) return grpc::Status::OK;
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        absl::StrCat("no request message within ",
                                     absl::FormatDuration(gate.body_timeout),
                                     " of the call's start (--request-body-timeout)"));
  }
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request message does not parse");
}

// A handler for a unary method: passes the gate, then reads the request and calls
// `serve(context, &request, &response)`; the response is sent when it returns OK.
template <class Request, class Response>
grpc::internal::MethodHandler* AuthorizeThenServeUnary(
    CallGate gate,
    std::function<grpc::Status(grpc::ServerContext*, const Request*, Response*)> serve) {
  return new grpc::internal::StreamedUnaryHandler<Request, Response>(
      [gate = std::move(gate), serve = std::move(serve)](
          grpc::ServerContext* context, grpc::ServerUnaryStreamer<Request, Response>* stream) {
        std::vector<CallAdmission::Ticket> held;
        if (grpc::Status status = gate.admit(context, &held); !status.ok()) return status;
        Request request;
        if (grpc::Status read = ReadRequest(gate, context, stream, &request); !read.ok()) {
          return read;
        }
        Response response;
        grpc::Status status = serve(context, &request, &response);
        if (status.ok()) stream->Write(response);
        return status;
      });
}

// The same for a server-streaming method: `serve(context, &request, write)`.
template <class Request, class Response>
grpc::internal::MethodHandler* AuthorizeThenServeStream(
    CallGate gate,
    std::function<grpc::Status(grpc::ServerContext*, const Request*,
                               const std::function<bool(const Response&)>&)>
        serve) {
  return new grpc::internal::SplitServerStreamingHandler<Request, Response>(
      [gate = std::move(gate), serve = std::move(serve)](
          grpc::ServerContext* context, grpc::ServerSplitStreamer<Request, Response>* stream) {
        std::vector<CallAdmission::Ticket> held;
        if (grpc::Status status = gate.admit(context, &held); !status.ok()) return status;
        Request request;
        if (grpc::Status read = ReadRequest(gate, context, stream, &request); !read.ok()) {
          return read;
        }
        return serve(context, &request,
                     [stream](const Response& chunk) { return stream->Write(chunk); });
      });
}

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_AUTH_FIRST_H_
