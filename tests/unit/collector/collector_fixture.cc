#include "tests/unit/collector/collector_fixture.h"

#include <grpcpp/generic/generic_stub.h>

#include "analysis/import/kineto_importer.h"
#include "analysis/wire/batch_codec.h"

namespace opmap::collector::test_support {

analysis::Trace SmallTrace() {
  using namespace analysis;
  Trace t;
  auto range = [&](int64_t start, int64_t dur, const char* name) {
    Range r;
    r.start_ns = kBase + start;
    r.dur_ns = dur;
    r.name = t.strings.Intern(name);
    r.kind = RangeKind::kCpuOp;
    r.process = 4242;
    r.thread = 100;
    t.ranges.push_back(r);
  };
  auto launch = [&](int64_t start, int64_t corr) {
    ApiCall a;
    a.start_ns = kBase + start;
    a.dur_ns = 50;
    a.name = t.strings.Intern("cudaLaunchKernel");
    a.process = 4242;
    a.thread = 100;
    a.correlation = corr;
    t.api_calls.push_back(a);
  };
  auto kernel = [&](int64_t start, int64_t dur, const char* name, int64_t corr) {
    GpuEvent g;
    g.start_ns = kBase + start;
    g.dur_ns = dur;
    g.name = t.strings.Intern(name);
    g.stream = 7;
    g.correlation = corr;
    t.gpu_events.push_back(g);
  };
  GpuEvent m;
  m.start_ns = kBase + 500;
  m.dur_ns = 100;
  m.name = t.strings.Intern("Memcpy HtoD (Pageable -> Device)");
  m.kind = GpuEventKind::kMemcpy;
  m.stream = 7;
  m.bytes = 1024;
  t.gpu_events.push_back(m);
  range(1000, 10000, "aten::linear");
  launch(2000, 1);
  launch(3000, 2);
  kernel(5000, 4000, "sm90_xmma_gemm_bf16", 1);
  kernel(9500, 1000, "gemm2", 2);
  range(20000, 10000, "aten::softmax");
  launch(21000, 3);
  launch(22000, 4);
  launch(23000, 5);
  kernel(25000, 500, "softmax_kernel", 3);
  kernel(26000, 700, "softmax_kernel", 4);
  kernel(27000, 300, "gemm2", 5);
  return t;
}


std::vector<Batch> SessionBatches(const std::string& session) {
  analysis::BatchingOptions options;
  options.agent_id = "agent-1";
  options.session_id = session;
  options.resource.set_host("node-1");
  options.resource.set_pid(4242);
  options.resource.set_model_name("llama");
  options.resource.set_model_revision("r1");
  opmap::v1::Gpu* gpu = options.resource.add_gpus();
  gpu->set_device(0);
  gpu->set_name("NVIDIA H200");
  options.max_records_per_batch = 3;
  absl::StatusOr<std::vector<Batch>> batches = analysis::TraceToBatches(SmallTrace(), options);
  EXPECT_TRUE(batches.ok()) << batches.status();
  EXPECT_EQ(batches->size(), 5u);
  return *batches;
}

analysis::Trace ExportAll(std::shared_ptr<grpc::Channel> channel, uint64_t* events) {
  auto stub = opmap::v1::Query::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kAnalystToken);
  opmap::v1::ExportTraceRequest request;
  auto reader = stub->ExportTrace(&ctx, request);
  std::string json;
  opmap::v1::TraceChunk chunk;
  bool last = false;
  while (reader->Read(&chunk)) {
    EXPECT_FALSE(last) << "a chunk after the last";
    EXPECT_LE(chunk.data().size(), 1u << 20);
    json += chunk.data();
    last = chunk.last();
    if (last && events != nullptr) *events = chunk.events();
  }
  grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(last);
  absl::StatusOr<analysis::Trace> trace = analysis::ImportKinetoJson(json);
  EXPECT_TRUE(trace.ok()) << trace.status() << "\n" << json.substr(0, 2000);
  return trace.ok() ? std::move(*trace) : analysis::Trace{};
}

int HealthStatus(std::shared_ptr<grpc::Channel> channel) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  auto call = stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag;
  bool ok;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (!status.ok()) return -1;
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  if (bytes.size() == 2 && bytes[0] == 0x08) return bytes[1];
  return bytes.empty() ? 0 : -2;
}

}  // namespace opmap::collector::test_support
