#include "collector/rejected_batch.h"

#include <string_view>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace opmap::collector {

using opmap::v1::Batch;

namespace {

// The batch without its events, with the delta kept or replaced by an empty one that
// continues the session's table of `string_count` strings.
Batch WithoutEvents(const Batch& b, bool keep_delta, uint32_t string_count) {
  Batch out;
  out.set_agent_id(b.agent_id());
  out.set_session_id(b.session_id());
  out.set_seq(b.seq());
  *out.mutable_resource() = b.resource();
  out.set_window_start_ns(b.window_start_ns());
  out.set_window_end_ns(b.window_end_ns());
  out.set_last_in_session(b.last_in_session());
  if (keep_delta) {
    *out.mutable_strings() = b.strings();
  } else {
    out.mutable_strings()->set_base_index(string_count);
    if (string_count == 0) out.mutable_strings()->add_strings("");
  }
  return out;
}

}  // namespace

std::optional<Batch> AppendRejectedRemainder(const Batch& batch,
                                             analysis::SessionAssembler& assembler,
                                             const analysis::BatchLimits& limits) {
  for (bool keep_delta : {true, false}) {
    Batch remainder = WithoutEvents(batch, keep_delta, assembler.string_count());
    if (assembler.Append(remainder, limits).ok()) return remainder;
  }
  return std::nullopt;
}

std::string DeterministicBytes(const Batch& batch) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    batch.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string RejectionCause(const absl::Status& status, const std::string& field) {
  std::string_view m(status.message().data(), status.message().size());
  std::string prefix = (field.empty() ? std::string("batch") : field) + ": ";
  if (m.starts_with(prefix)) m.remove_prefix(prefix.size());
  return std::string(m);
}

}  // namespace opmap::collector
