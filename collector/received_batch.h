// A Batch as the Ingest stream receives it: parsed, and its bytes as they came.
//
// Why: the store keeps each batch serialized (for export and for rebuilding a session).
// Re-serializing the parsed message for that cost ~4% of the collector's CPU at 1 M
// kernels/s; the bytes on the wire are already that serialization (proto3 parses them to
// the same message, unknown fields included). gRPC reads a request type through
// grpc::SerializationTraits, so this type's traits keep the bytes, then parse them.
#ifndef OPMAP_COLLECTOR_RECEIVED_BATCH_H_
#define OPMAP_COLLECTOR_RECEIVED_BATCH_H_

#include <string>
#include <vector>

#include "grpcpp/impl/serialization_traits.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "grpcpp/support/status.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::collector {

struct ReceivedBatch {
  opmap::v1::Batch batch;
  std::string bytes;    // what `batch` was parsed from
  bool parsed = false;  // false: `bytes` is not a Batch (the handler answers the error)
};

}  // namespace opmap::collector

namespace grpc {

template <>
class SerializationTraits<opmap::collector::ReceivedBatch, void> {
 public:
  static Status Serialize(const opmap::collector::ReceivedBatch& msg, ByteBuffer* buffer,
                          bool* own_buffer) {
    Slice slice(msg.bytes);
    *buffer = ByteBuffer(&slice, 1);
    *own_buffer = true;
    return Status::OK;
  }

  static Status Deserialize(ByteBuffer* buffer, opmap::collector::ReceivedBatch* msg) {
    if (buffer == nullptr) return Status(StatusCode::INTERNAL, "No payload");
    std::vector<Slice> slices;
    Status st = buffer->Dump(&slices);
    buffer->Clear();
    if (!st.ok()) return st;
    size_t size = 0;
    for (const Slice& s : slices) size += s.size();
    msg->bytes.clear();
    msg->bytes.reserve(size);
    for (const Slice& s : slices) {
      msg->bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    // A message that does not parse is handed to the handler flagged, not refused here:
    // a refusal here would end the stream as if the client had closed it (status OK).
    msg->parsed = msg->batch.ParseFromString(msg->bytes);
    if (!msg->parsed) msg->batch.Clear();
    return Status::OK;
  }
};

}  // namespace grpc

#endif  // OPMAP_COLLECTOR_RECEIVED_BATCH_H_
