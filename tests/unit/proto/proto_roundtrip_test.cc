// The wire contract (proto/opmap/v1) round-trips exactly, stays compact, tolerates
// newer writers, and works over a real gRPC stream on loopback.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
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

namespace opmap::v1 {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::FileDescriptorProto;
using google::protobuf::Message;
using google::protobuf::util::DefaultFieldComparator;
using google::protobuf::util::MessageDifferencer;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kEpoch2023Ns = 1'700'000'000'000'000'000;  // a realistic REALTIME value
const double kNaN = std::numeric_limits<double>::quiet_NaN();

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

void FillResource(Resource* r) {
  r->set_host("gpu-node-17.fleet");
  r->set_pid(4'194'303);  // Linux pid_max
  r->set_process_start_ns(kEpoch2023Ns - 1);
  r->set_container_id("3f2a9c");
  r->set_cgroup("/kubepods.slice/pod-abc/cri-containerd-3f2a9c.scope");
  (*r->mutable_labels())["job"] = "llm-serving";
  (*r->mutable_labels())["team"] = "inference";
  r->set_model_name("llama-3-8b-instruct");
  r->set_model_revision("r42");
  r->set_precision(PRECISION_BF16);
  r->set_framework("pytorch");
  r->set_framework_version("2.4.1+cu124");
  r->set_compiler("inductor");
  r->set_compiler_version("2.4.1");
  r->set_cuda_runtime_version("12.4");
  r->set_driver_version("550.54.15");
  r->set_cupti_version("22");
  r->set_agent_version("0.1.0");
  for (uint32_t d = 0; d < 2; ++d) {
    Gpu* g = r->add_gpus();
    g->set_device(d);
    g->set_name("NVIDIA H200");
    g->set_uuid("GPU-5d1c0000-0000-0000-0000-00000000000" + std::to_string(d));
    g->set_sm_count(132);
    g->set_compute_capability_major(9);
    g->set_compute_capability_minor(0);
    g->set_sm_clock_mhz(1980);
    g->set_memory_clock_mhz(3201);
    g->set_power_limit_mw(700'000);
    g->set_memory_bytes(150'754'820'096);
  }
}

// Start times: the int64 extremes and a pre-epoch value at the edges, realistic inside.
int64_t EdgeStart(int i, int n) {
  if (i == 0) return kI64Min;
  if (i == 1) return -1;
  if (i == n - 1) return kI64Max;
  return kEpoch2023Ns + int64_t{i} * 5'000;
}

// Every column of every event kind filled, with edge values. The wire carries values
// the collector will reject (a negative duration) so that it can name them.
Batch MakeFullBatch(int n) {
  Batch b;
  b.set_agent_id("agent-7f3c");
  b.set_session_id("session-2024-05-01T10:00:00Z-4194303");
  b.set_seq(std::numeric_limits<uint64_t>::max());
  FillResource(b.mutable_resource());
  b.set_window_start_ns(kEpoch2023Ns);
  b.set_window_end_ns(kI64Max);
  b.set_last_in_session(true);

  StringTableDelta* st = b.mutable_strings();
  st->set_base_index(0);
  st->add_strings("");
  st->add_strings(std::string("odd NVTX name \xff\xfe\x00 with NUL", 26));  // not UTF-8
  for (int i = 2; i < 300; ++i) {
    st->add_strings("void gemm_kernel<cutlass::bfloat16_t, " + std::to_string(i) + ">()");
  }

  KernelColumns* k = b.mutable_kernels();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    k->add_start_ns(EdgeStart(i, n));
    k->add_dur_ns(i == 2 ? -5 : i == 3 ? kI64Max : (int64_t{i} * 7919) % 2'000'000);
    k->add_name_id(u % 300);
    k->add_device(u % 8);
    k->add_stream(7 + u % 13);
    k->add_correlation(i == 4 ? UINT32_MAX : u + 1);
    k->add_external_id(i == 5 ? UINT64_MAX : uint64_t{u} * 3);
    k->add_graph_id(u % 2 == 0 ? 0 : 1 + u % 4);
    k->add_graph_node_id(i == 6 ? UINT64_MAX : uint64_t{u} << 20);
    k->add_grid_x(1 + u * 17 % 65'535);
    k->add_grid_y(1 + u % 3);
    k->add_grid_z(1);
    k->add_block_x(32u << (u % 5));
    k->add_block_y(1 + u % 2);
    k->add_block_z(1);
    k->add_registers_per_thread(16 + u % 240);
    k->add_static_shared_memory_bytes(u % 49'152);
    k->add_dynamic_shared_memory_bytes(u % 3 == 0 ? 232'448 : 0);
    k->add_launch_tid(u % 10 == 0 ? 0 : 100'000 + u % 7);
  }

  MemoryOpColumns* m = b.mutable_memory_ops();
  for (int i = 0; i < n / 2; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    m->add_kind(static_cast<MemoryOpKind>(1 + u % 7));
    m->add_start_ns(EdgeStart(i, n / 2));
    m->add_dur_ns(int64_t{i} * 101);
    m->add_bytes(i == 1 ? UINT64_MAX : uint64_t{u} << 12);
    m->add_device(u % 8);
    m->add_stream(7 + u % 3);
    m->add_correlation(u + 1);
    m->add_external_id(u);
    m->add_graph_id(u % 3);
    m->add_graph_node_id(u);
    m->add_host_pageable(u % 4 == 0);
    m->add_dst_device((u + 1) % 8);
  }

  LaunchApiColumns* l = b.mutable_launches();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    l->add_start_ns(EdgeStart(i, n));
    l->add_dur_ns(3'000 + i);
    l->add_name_id(1 + u % 3);
    l->add_api_kind(u % 2 == 0 ? API_KIND_RUNTIME : API_KIND_DRIVER);
    l->add_pid(4'194'303);
    l->add_tid(100'000 + u % 7);
    l->add_correlation(u + 1);
    l->add_external_id(uint64_t{u} * 3);
  }

  RangeColumns* r = b.mutable_ranges();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    r->add_start_ns(EdgeStart(i, n));
    r->add_dur_ns(i == 7 ? kI64Min : int64_t{i} * 1'000);
    r->add_name_id(u % 300);
    r->add_kind(static_cast<RangeKind>(1 + u % 5));
    r->add_domain_id(u % 4);
    r->add_pid(4'194'303);
    r->add_tid(100'000 + u % 7);
    r->add_depth(u % 6);
    r->add_external_id(uint64_t{u} * 3);
    r->add_flops(u % 3 == 0 ? kNaN : 2.0 * 4096 * 4096 * (u + 0.1));
    r->add_bytes(u % 5 == 0 ? kNaN : u * 0.1);
  }

  CounterSamples* c = b.mutable_counters();
  for (int i = 0; i < 200; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    c->add_name_id(1 + u % 4);
    c->add_source(u % 2 == 0 ? COUNTER_SOURCE_PAPI : COUNTER_SOURCE_PERF_EVENT);
    c->add_ts_ns(EdgeStart(i, 200));
    c->add_pid(4'194'303);
    c->add_value(i == 0 ? kI64Min : i == 1 ? kI64Max : int64_t{i} * 1'000'003);
    c->add_time_enabled_ns(10'000'000);
    c->add_time_running_ns(i == 2 ? 0 : 2'500'000);  // 0 = never ran
  }

  StallSamples* s = b.mutable_stalls();
  for (int i = 0; i < 60; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    s->add_function_id(2 + u / 6);
    s->add_reason_id(200 + u % 6);
    s->add_samples(i == 0 ? UINT64_MAX : uint64_t{u} * 977);
    s->add_device(u % 2);
  }
  for (uint32_t f = 0; f < 10; ++f) {
    s->add_total_function_id(2 + f);
    s->add_total_samples(100'000 + f);
  }

  DropCounters* d = b.mutable_drops();
  DropCount* dc = d->add_counts();
  dc->set_stage(DROP_STAGE_RING);
  dc->set_kind(EVENT_KIND_KERNEL);
  dc->set_count(UINT64_MAX);
  dc->set_reason("ring full");
  dc = d->add_counts();
  dc->set_stage(DROP_STAGE_SPOOL);
  dc->set_kind(EVENT_KIND_BATCH);
  dc->set_count(3);
  dc->set_reason("spool over 1 GiB budget");
  Unavailable* un = d->add_unavailable();
  un->set_what("cupti");
  un->set_reason("no driver");
  return b;
}

TEST(ProtoRoundTrip, EveryColumnFilledSurvivesExactly) {
  const Batch sent = MakeFullBatch(1000);
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

// Realistic kernels: CLOCK_REALTIME starts ~5 µs apart, durations 2 µs..2 ms, a few
// hundred distinct names, 8 devices, typical launch geometry. Seeded: the same every run.
KernelColumns MakeRealisticKernels(int n, bool from_graphs) {
  std::mt19937_64 rng(20240501);
  auto uniform = [&](uint64_t lo, uint64_t hi) {
    return lo + rng() % (hi - lo + 1);
  };
  KernelColumns k;
  int64_t t = kEpoch2023Ns;
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(uniform(1'000, 10'000));
    k.add_start_ns(t);
    k.add_dur_ns(static_cast<int64_t>(uniform(2'000, 2'000'000)));
    k.add_name_id(static_cast<uint32_t>(uniform(1, 400)));
    k.add_device(static_cast<uint32_t>(uniform(0, 7)));
    k.add_stream(static_cast<uint32_t>(uniform(7, 30)));
    k.add_correlation(static_cast<uint32_t>(1'000'000 + i));
    k.add_external_id(static_cast<uint64_t>(500'000 + i / 4));
    if (from_graphs) {
      k.add_graph_id(static_cast<uint32_t>(uniform(1, 40)));
      k.add_graph_node_id(static_cast<uint64_t>(uniform(1, 1'000'000)));
    }
    k.add_grid_x(static_cast<uint32_t>(uniform(1, 4'096)));
    k.add_grid_y(static_cast<uint32_t>(uniform(1, 32)));
    k.add_grid_z(1);
    k.add_block_x(static_cast<uint32_t>(128 << uniform(0, 2)));
    k.add_block_y(1);
    k.add_block_z(1);
    k.add_registers_per_thread(static_cast<uint32_t>(uniform(24, 255)));
    k.add_static_shared_memory_bytes(static_cast<uint32_t>(uniform(0, 49'152)));
    k.add_dynamic_shared_memory_bytes(uniform(0, 1) ? 0u : 232'448u);
    k.add_launch_tid(static_cast<uint32_t>(uniform(100'000, 4'000'000)));
  }
  return k;
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

// Bound per kernel, every column present, from varint widths of realistic values:
// start 8 (sfixed64) + dur ≤3 + name 2 + device 1 + stream 1 + correlation 3 +
// external_id 3 + grid 2+1+1 + block 2+1+1 + registers 2 + shared memory 3+3 + tid 3
// = 40; graph ids add up to 1 + 3. Column headers (tag + length) are amortized.
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
    // Packing saves at least one tag byte per value (17..19 values per kernel).
    EXPECT_GE(unpacked - per_kernel, graphs ? 19.0 : 17.0);
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
