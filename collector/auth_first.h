// Authorize before the request body is read.
//
// Why: gRPC's ordinary unary handler receives the whole request message before the
// service method runs, so an unauthenticated caller could make the collector buffer a
// 64 MiB body just to be refused (8 such calls took it past 1 GB). Registering a unary
// method as "streamed unary" lets the handler check the call's metadata first and read
// the body only for an authorized caller; a refused call ends with the body unread, so
// at most the HTTP/2 flow-control window of it is ever held.
#ifndef OPMAP_COLLECTOR_AUTH_FIRST_H_
#define OPMAP_COLLECTOR_AUTH_FIRST_H_

#include <functional>

#include <grpcpp/server_context.h>
#include <grpcpp/support/method_handler.h>
#include <grpcpp/support/status.h>

namespace opmap::collector {

// A handler for a unary method: runs `authorize(context)`, then reads the request and
// calls `serve(context, &request, &response)`; the response is sent when it returns OK.
template <class Request, class Response>
grpc::internal::MethodHandler* AuthorizeThenServeUnary(
    std::function<grpc::Status(grpc::ServerContext*)> authorize,
    std::function<grpc::Status(grpc::ServerContext*, const Request*, Response*)> serve) {
  return new grpc::internal::StreamedUnaryHandler<Request, Response>(
      [authorize = std::move(authorize), serve = std::move(serve)](
          grpc::ServerContext* context, grpc::ServerUnaryStreamer<Request, Response>* stream) {
        if (grpc::Status status = authorize(context); !status.ok()) return status;
        Request request;
        if (!stream->Read(&request)) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "the request message does not parse");
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
    std::function<grpc::Status(grpc::ServerContext*)> authorize,
    std::function<grpc::Status(grpc::ServerContext*, const Request*,
                               const std::function<bool(const Response&)>&)>
        serve) {
  return new grpc::internal::SplitServerStreamingHandler<Request, Response>(
      [authorize = std::move(authorize), serve = std::move(serve)](
          grpc::ServerContext* context, grpc::ServerSplitStreamer<Request, Response>* stream) {
        if (grpc::Status status = authorize(context); !status.ok()) return status;
        Request request;
        if (!stream->Read(&request)) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "the request message does not parse");
        }
        return serve(context, &request,
                     [stream](const Response& chunk) { return stream->Write(chunk); });
      });
}

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_AUTH_FIRST_H_
