// The wire contract (proto/opmap/v1) round-trips exactly, stays compact, tolerates
// newer writers, and works over a real gRPC stream on loopback.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.pb.h"
#include "opmap/v1/telemetry.pb.h"
#include "tests/unit/proto/batch_fixtures.h"

namespace opmap::v1 {
namespace {

using testing_fixtures::kI64Max;
using testing_fixtures::kI64Min;
using testing_fixtures::MakeFullBatch;
using testing_fixtures::MakeRealisticKernels;

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::FileDescriptorProto;
using google::protobuf::Message;
using google::protobuf::util::DefaultFieldComparator;
using google::protobuf::util::MessageDifferencer;

// Equality that treats NaN == NaN: NaN is the contract's "unknown" for range flops/bytes,
// and the plain Equals would call any batch carrying one different from itself.
bool SameMessage(const Message& a, const Message& b, std::string* diff = nullptr) {
  DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  if (diff != nullptr) differencer.ReportDifferencesToString(diff);
  return differencer.Compare(a, b);
}

// Full names of the fields set anywhere in `m` (in any element of a repeated message).
void CollectSetFields(const Message& m, std::set<std::string>* out) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const auto* f : fields) {
    out->insert(f->full_name());
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!f->is_repeated()) {
      CollectSetFields(m.GetReflection()->GetMessage(m, f), out);
      continue;
    }
    for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
      CollectSetFields(m.GetReflection()->GetRepeatedMessage(m, f, i), out);
    }
  }
}

// Full names of every field reachable from `d`.
void CollectAllFields(const Descriptor* d, std::set<std::string>* out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (!out->insert(f->full_name()).second) continue;
    if (f->message_type() != nullptr) CollectAllFields(f->message_type(), out);
  }
}

TEST(ProtoRoundTrip, EveryColumnFilledSurvivesExactly) {
  const Batch sent = MakeFullBatch(1000);
  // The fixture must exercise every field, including ones added after this test.
  std::set<std::string> all, set;
  CollectAllFields(Batch::descriptor(), &all);
  CollectSetFields(sent, &set);
  set.insert("opmap.v1.StringTableDelta.base_index");  // 0 in a session's first batch
  for (const std::string& name : all) EXPECT_TRUE(set.count(name)) << name << " never set";

  std::string wire;
  ASSERT_TRUE(sent.SerializeToString(&wire));
  Batch got;
  ASSERT_TRUE(got.ParseFromString(wire));

  std::string diff;
  EXPECT_TRUE(SameMessage(sent, got, &diff)) << diff;
  // Spot checks of the edges, independent of the differencer.
  ASSERT_EQ(got.kernels().start_ns_size(), 1000);
  EXPECT_EQ(got.kernels().start_ns(0), kI64Min);
  EXPECT_EQ(got.kernels().start_ns(1), -1);
  EXPECT_EQ(got.kernels().start_ns(999), kI64Max);
  EXPECT_EQ(got.kernels().dur_ns(2), -5);
  EXPECT_EQ(got.kernels().external_id(5), UINT64_MAX);
  EXPECT_EQ(got.ranges().dur_ns(7), kI64Min);
  EXPECT_TRUE(std::isnan(got.ranges().flops(0)));
  EXPECT_EQ(got.ranges().flops(1), 2.0 * 4096 * 4096 * 1.1);
  EXPECT_EQ(got.counters().value(0), kI64Min);
  EXPECT_EQ(got.drops().counts(0).count(), UINT64_MAX);
  EXPECT_EQ(got.strings().strings(1), sent.strings().strings(1));  // non-UTF-8 bytes kept
  EXPECT_EQ(got.resource().labels().at("job"), "llm-serving");
  EXPECT_EQ(got.seq(), UINT64_MAX);

  // The comparison can fail: one changed value deep in a column is seen.
  got.mutable_kernels()->set_dur_ns(500, got.kernels().dur_ns(500) + 1);
  EXPECT_FALSE(SameMessage(sent, got));
}

TEST(ProtoRoundTrip, PlainEqualsHoldsWithoutNaN) {
  Batch sent = MakeFullBatch(100);
  sent.mutable_ranges()->clear_flops();  // an absent column: "not known for any row"
  sent.mutable_ranges()->clear_bytes();
  Batch got;
  ASSERT_TRUE(got.ParseFromString(sent.SerializeAsString()));
  EXPECT_TRUE(MessageDifferencer::Equals(sent, got));
  EXPECT_EQ(got.ranges().flops_size(), 0);
}

// The same columns as one submessage per value-tag: what "not packed" would cost. Built
// from the real descriptor with packed=false, so it tracks the schema as it grows.
size_t UnpackedSize(const KernelColumns& packed) {
  FileDescriptorProto file;
  KernelColumns::descriptor()->file()->CopyTo(&file);
  for (auto& msg : *file.mutable_message_type()) {
    if (msg.name() != "KernelColumns") continue;
    for (auto& field : *msg.mutable_field()) field.mutable_options()->set_packed(false);
  }
  DescriptorPool pool;
  const auto* fd = pool.BuildFile(file);
  EXPECT_NE(fd, nullptr);
  DynamicMessageFactory factory(&pool);
  std::unique_ptr<Message> unpacked(
      factory.GetPrototype(fd->FindMessageTypeByName("KernelColumns"))->New());
  // Parsers accept either encoding, so the packed bytes load into the unpacked schema.
  EXPECT_TRUE(unpacked->ParseFromString(packed.SerializeAsString()));
  return unpacked->ByteSizeLong();
}

// Per kernel, every column present, varint widths of MakeRealisticKernels' ranges:
// start 8 (sfixed64) + dur 2..3 + name 1..2 + device 1 + stream 1 + correlation 3 +
// external_id 3 + grid 2+1+1 + block 2+1+1 + registers 1..2 + shared memory 1..3 +
// 1..3 + tid 3..4 = at most 42 (graph ids: +1 +1..3). Measured 38.36 (eager) and 42.34
// (graphs); the bounds below leave ~4% for schema growth before someone must look.
// Column headers (tag + length) amortize to nothing at this row count.
TEST(ProtoSize, PackedKernelColumnsStayCompact) {
  constexpr int kKernels = 10'000;
  for (bool graphs : {false, true}) {
    const KernelColumns k = MakeRealisticKernels(kKernels, graphs);
    const double per_kernel = static_cast<double>(k.ByteSizeLong()) / kKernels;
    const double unpacked = static_cast<double>(UnpackedSize(k)) / kKernels;
    std::cout << "kernel columns (" << (graphs ? "graph launches" : "eager")
              << "): " << per_kernel << " bytes/kernel packed, " << unpacked
              << " bytes/kernel unpacked\n";
    EXPECT_LE(per_kernel, graphs ? 44.0 : 40.0);
    EXPECT_GT(per_kernel, 20.0);  // a lower figure would mean columns went missing
    // Packing saves exactly one tag per value: fields 1..15 take a 1-byte tag, 16..19 a
    // 2-byte one, so 17 columns save 21 bytes per kernel and 19 columns save 23.
    EXPECT_NEAR(unpacked - per_kernel, graphs ? 23.0 : 21.0, 0.05);
  }
}

// A newer writer (v2) adds a Batch field, a KernelColumns column and a RangeKind value.
// Today's reader (v1, e.g. a collector not yet upgraded) must parse the batch, keep the
// unknowns, and hand them on intact.
TEST(ProtoCompat, OldReaderKeepsNewFieldsAndEnumValues) {
  FileDescriptorProto file;
  Batch::descriptor()->file()->CopyTo(&file);
  for (auto& msg : *file.mutable_message_type()) {
    if (msg.name() == "Batch") {
      auto* f = msg.add_field();
      f->set_name("future_note");
      f->set_number(1000);
      f->set_type(google::protobuf::FieldDescriptorProto::TYPE_STRING);
      f->set_label(google::protobuf::FieldDescriptorProto::LABEL_OPTIONAL);
    } else if (msg.name() == "KernelColumns") {
      auto* f = msg.add_field();
      f->set_name("future_column");
      f->set_number(99);
      f->set_type(google::protobuf::FieldDescriptorProto::TYPE_UINT32);
      f->set_label(google::protobuf::FieldDescriptorProto::LABEL_REPEATED);
    }
  }
  for (auto& e : *file.mutable_enum_type()) {
    if (e.name() != "RangeKind") continue;
    auto* v = e.add_value();
    v->set_name("RANGE_KIND_FUTURE");
    v->set_number(99);
  }
  DescriptorPool pool;
  const auto* fd = pool.BuildFile(file);
  ASSERT_NE(fd, nullptr);
  DynamicMessageFactory factory(&pool);
  const Descriptor* v2_batch = fd->FindMessageTypeByName("Batch");
  std::unique_ptr<Message> v2(factory.GetPrototype(v2_batch)->New());

  const Batch base = MakeFullBatch(10);
  ASSERT_TRUE(v2->ParseFromString(base.SerializeAsString()));
  const auto* refl = v2->GetReflection();
  refl->SetString(v2.get(), v2_batch->FindFieldByName("future_note"), "from v2");
  Message* v2_kernels =
      refl->MutableMessage(v2.get(), v2_batch->FindFieldByName("kernels"));
  const auto* future_column =
      v2_kernels->GetDescriptor()->FindFieldByName("future_column");
  for (uint32_t i = 0; i < 10; ++i) {
    v2_kernels->GetReflection()->AddUInt32(v2_kernels, future_column, 1000 + i);
  }
  Message* v2_ranges = refl->MutableMessage(v2.get(), v2_batch->FindFieldByName("ranges"));
  v2_ranges->GetReflection()->SetRepeatedEnumValue(
      v2_ranges, v2_ranges->GetDescriptor()->FindFieldByName("kind"), 0, 99);

  Batch v1;
  ASSERT_TRUE(v1.ParseFromString(v2->SerializeAsString()));
  EXPECT_EQ(v1.kernels().start_ns(0), kI64Min);  // known fields intact
  EXPECT_EQ(v1.kernels().dur_ns(2), -5);
  EXPECT_EQ(static_cast<int>(v1.ranges().kind(0)), 99);  // open enum: value kept
  const auto& unknown = v1.GetReflection()->GetUnknownFields(v1);
  ASSERT_EQ(unknown.field_count(), 1);
  EXPECT_EQ(unknown.field(0).number(), 1000);
  EXPECT_EQ(unknown.field(0).length_delimited(), "from v2");
  EXPECT_EQ(v1.kernels().GetReflection()->GetUnknownFields(v1.kernels()).field_count(), 1);

  // Re-serialized by the old reader, the batch still carries everything v2 wrote.
  std::unique_ptr<Message> back(factory.GetPrototype(v2_batch)->New());
  ASSERT_TRUE(back->ParseFromString(v1.SerializeAsString()));
  std::string diff;
  EXPECT_TRUE(SameMessage(*v2, *back, &diff)) << diff;
}

// Why the string table is `bytes`: one invalid UTF-8 sequence in a proto3 `string`
// field fails the parse of the whole batch, whereas the string table carries any bytes.
TEST(ProtoCompat, InvalidUtf8FailsStringFieldsButNotTheStringTable) {
  Batch b;
  b.set_seq(1);
  b.mutable_strings()->add_strings("");
  b.mutable_strings()->add_strings("\xc3\x28 invalid 2-byte sequence");
  Batch got;
  ASSERT_TRUE(got.ParseFromString(b.SerializeAsString()));
  EXPECT_EQ(got.strings().strings(1), "\xc3\x28 invalid 2-byte sequence");

  b.set_agent_id("agent-\xc3\x28");  // protobuf logs an error while serializing this
  EXPECT_FALSE(got.ParseFromString(b.SerializeAsString()));
}

TEST(ProtoQuery, SketchAndLatencyRowRoundTrip) {
  LatencyResponse resp;
  LatencyRow* row = resp.add_rows();
  row->add_key("aten::mm");
  row->add_key("r42");
  row->set_count(1'000'003);
  row->set_sum_ns(kI64Max);
  row->set_min_ns(0);
  row->set_max_ns(kI64Max);
  row->add_quantile_ns(12'345.678);
  row->add_quantile_ns(1e15);
  row->set_relative_accuracy(0x1.62e34c980baa4p-8);
  Sketch* s = row->mutable_sketch();
  s->set_scale(6);
  s->set_offset(-2'048);
  for (uint64_t i = 0; i < 2'048; ++i) s->add_counts(i == 0 ? UINT64_MAX / 2 : i);
  s->set_zero_count(7);
  s->set_count(1'000'003);
  s->set_sum(-0.0);
  s->set_min(std::numeric_limits<double>::denorm_min());
  s->set_max(std::numeric_limits<double>::max());
  resp.add_unavailable()->set_what("p99 for revision r41");

  LatencyResponse got;
  ASSERT_TRUE(got.ParseFromString(resp.SerializeAsString()));
  EXPECT_TRUE(MessageDifferencer::Equals(resp, got));
  EXPECT_EQ(got.rows(0).sketch().offset(), -2'048);
  EXPECT_EQ(got.rows(0).sketch().counts_size(), 2'048);
  EXPECT_EQ(got.rows(0).sketch().min(), std::numeric_limits<double>::denorm_min());
  EXPECT_TRUE(std::signbit(got.rows(0).sketch().sum()));
}

// A trivial collector: acks each batch as durable on receipt and rejects a negative
// kernel duration, naming the row, the way the real collector must.
class EchoIngest final : public Ingest::Service {
 public:
  grpc::Status Ingest(grpc::ServerContext*,
                      grpc::ServerReaderWriter<Ack, Batch>* stream) override {
    Batch batch;
    while (stream->Read(&batch)) {
      Ack ack;
      ack.set_agent_id(batch.agent_id());
      ack.set_session_id(batch.session_id());
      ack.set_durable_seq(batch.seq());
      for (int i = 0; i < batch.kernels().dur_ns_size(); ++i) {
        if (batch.kernels().dur_ns(i) >= 0) continue;
        Rejection* r = ack.add_rejected();
        r->set_seq(batch.seq());
        r->set_field("kernels.dur_ns[" + std::to_string(i) + "]");
        r->set_message("negative duration " + std::to_string(batch.kernels().dur_ns(i)));
        r->set_code(REJECTION_CODE_INVALID_VALUE);
        break;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        kernels_received_ += static_cast<size_t>(batch.kernels().start_ns_size());
      }
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
  size_t kernels_received() {
    std::lock_guard<std::mutex> lock(mu_);
    return kernels_received_;
  }

 private:
  std::mutex mu_;
  size_t kernels_received_ = 0;
};

TEST(ProtoGrpc, IngestStreamAcksEachSequenceNumber) {
  EchoIngest service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                     grpc::InsecureChannelCredentials());
  auto stub = Ingest::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->Ingest(&ctx);

  std::vector<Ack> acks;
  for (uint64_t seq = 1; seq <= 5; ++seq) {
    Batch b;
    b.set_agent_id("agent-7f3c");
    b.set_session_id("s1");
    b.set_seq(seq);
    *b.mutable_kernels() = MakeRealisticKernels(100, false);
    if (seq == 3) b.mutable_kernels()->set_dur_ns(3, -5);
    ASSERT_TRUE(stream->Write(b)) << "seq " << seq;
    Ack ack;
    ASSERT_TRUE(stream->Read(&ack)) << "seq " << seq;
    acks.push_back(ack);
  }
  ASSERT_TRUE(stream->WritesDone());
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  server->Shutdown();

  ASSERT_EQ(acks.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(acks[i].durable_seq(), i + 1);
    EXPECT_EQ(acks[i].agent_id(), "agent-7f3c");
    EXPECT_EQ(acks[i].session_id(), "s1");
    EXPECT_EQ(acks[i].rejected_size(), i + 1 == 3 ? 1 : 0) << "ack " << i;
  }
  ASSERT_EQ(acks[2].rejected_size(), 1);
  EXPECT_EQ(acks[2].rejected(0).seq(), 3u);
  EXPECT_EQ(acks[2].rejected(0).field(), "kernels.dur_ns[3]");
  EXPECT_EQ(acks[2].rejected(0).message(), "negative duration -5");
  EXPECT_EQ(acks[2].rejected(0).code(), REJECTION_CODE_INVALID_VALUE);
  EXPECT_EQ(service.kernels_received(), 500u);
}

}  // namespace
}  // namespace opmap::v1
