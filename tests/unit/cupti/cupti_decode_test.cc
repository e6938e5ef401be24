// DecodeActivityBuffer against the real libcupti of this toolkit: activity buffers are
// built by hand from the CUDA 13.0 record structs, walked by libcupti's own
// cuptiActivityGetNextRecord (which works without a GPU), decoded into a ring on the heap,
// and read back field by field.
#include "agent/inject/cupti/cupti_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/cupti/ring_test_reader.h"

namespace opmap::inject {
namespace {

using ::opmap::testing::HeapRing;
using Rec = HeapRing::Record;

// An activity buffer as CUPTI fills one: records back to back, 8-byte aligned.
class ActivityBuffer {
 public:
  template <typename T>
  T* Add(CUpti_ActivityKind kind) {
    static_assert(sizeof(T) % 8 == 0);
    const size_t off = bytes_.size();
    bytes_.resize(off + sizeof(T), 0);
    T* t = reinterpret_cast<T*>(bytes_.data() + off);
    t->kind = kind;
    return t;
  }
  void AddRaw(size_t n, uint8_t fill) { bytes_.resize(bytes_.size() + n, fill); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(bytes_.data()); }
  size_t size() const { return bytes_.size(); }

 private:
  // uint64_t storage keeps the buffer 8-byte aligned, as CUPTI requires.
  struct Bytes {
    std::vector<uint64_t> words;
    size_t n = 0;
    uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
    size_t size() const { return n; }
    void resize(size_t m, uint8_t fill) {
      words.resize((m + 7) / 8, 0);
      if (m > n) std::memset(data() + n, fill, m - n);
      n = m;
    }
  } bytes_;
};

class CuptiDecodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!LoadCuptiApi(&api_, &reason)) GTEST_SKIP() << "libcupti unavailable: " << reason;
  }
  CuptiApi api_;
};

CUpti_ActivityKernel10* AddKernel(ActivityBuffer* b, uint32_t corr, const char* name) {
  auto* k = b->Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k->correlationId = corr;
  k->name = name;
  return k;
}

CUpti_ActivityAPI* AddApi(ActivityBuffer* b, CUpti_ActivityKind kind, CUpti_CallbackId cbid,
                          uint32_t corr, uint64_t start, uint64_t end) {
  auto* a = b->Add<CUpti_ActivityAPI>(kind);
  a->cbid = cbid;
  a->correlationId = corr;
  a->start = start;
  a->end = end;
  a->processId = 4242;
  a->threadId = 4343;
  return a;
}

TEST_F(CuptiDecodeTest, RecordSizesAreThoseOfCuda13) {
  EXPECT_EQ(sizeof(CUpti_ActivityKernel10), 216u);  // PLATFORM_NOTES
  EXPECT_EQ(CUPTI_API_VERSION, 130001);
}

// Two per-thread buffers as CUPTI may hand them over: A (kernels: a plain one, two
// graph-launched ones sharing one correlation id; a memcpy; a memset) and B (the
// launching thread: an external correlation and the runtime/driver API records). In time
// B's records come first; A is decoded first, so every kernel reaches the ring before its
// launch API record. The decoder keeps decode order exactly; the analysis sorts.
TEST_F(CuptiDecodeTest, OutOfOrderBuffersDecodeEveryField) {
  static const char kPlain[] = "_Z10gemm_bf16PKfS0_Pfi";
  static const char kGraph1[] = "ampere_sgemm_128x64_nn";
  static const char kGraph2[] = "void at::native::vectorized_elementwise_kernel<4>";

  ActivityBuffer a;
  CUpti_ActivityKernel10* k = AddKernel(&a, 200, kPlain);
  k->start = 1'700'000'000'000'001'000ull;
  k->end = 1'700'000'000'000'009'500ull;
  k->deviceId = 3;
  k->contextId = 7;
  k->streamId = 13;
  k->gridX = 120; k->gridY = 2; k->gridZ = 1;
  k->blockX = 256; k->blockY = 1; k->blockZ = 1;
  k->registersPerThread = 96;
  k->staticSharedMemory = 16384;
  k->dynamicSharedMemory = 49152;
  k->localMemoryPerThread = 24;
  k->graphId = 0;
  k->graphNodeId = 0;

  // Graph launch: both kernels share the cudaGraphLaunch correlation id.
  CUpti_ActivityKernel10* g1 = AddKernel(&a, 300, kGraph1);
  g1->start = 1'700'000'000'000'020'000ull;
  g1->end = 1'700'000'000'000'025'000ull;
  g1->graphId = 17;
  g1->graphNodeId = 0x0000001100000001ull;
  g1->deviceId = 3; g1->contextId = 7; g1->streamId = 14;
  g1->gridX = 1; g1->gridY = 1; g1->gridZ = 1; g1->blockX = 32; g1->blockY = 1; g1->blockZ = 1;
  g1->registersPerThread = 32;
  // The KERNEL kind (serialized capture) carries the same struct.
  auto* g2 = a.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_KERNEL);
  g2->correlationId = 300;
  g2->name = kGraph2;
  g2->start = 1'700'000'000'000'025'100ull;
  g2->end = 1'700'000'000'000'026'000ull;
  g2->graphId = 17;
  g2->graphNodeId = 0x0000001100000002ull;
  g2->deviceId = 3; g2->contextId = 7; g2->streamId = 14;
  g2->gridX = 64; g2->gridY = 1; g2->gridZ = 1; g2->blockX = 128; g2->blockY = 1; g2->blockZ = 1;
  g2->registersPerThread = 16;
  g2->dynamicSharedMemory = 0;

  auto* m = a.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m->bytes = 1u << 20;
  m->start = 1'700'000'000'000'000'100ull;
  m->end = 1'700'000'000'000'000'900ull;
  m->deviceId = 3; m->contextId = 7; m->streamId = 13;
  m->correlationId = 150;
  m->graphId = 18;
  m->graphNodeId = 99;

  auto* s = a.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s->value = 0xAB;
  s->bytes = 4096;
  s->start = 1'700'000'000'000'030'000ull;
  s->end = 1'700'000'000'000'030'400ull;
  s->deviceId = 3; s->contextId = 7; s->streamId = 15;
  s->correlationId = 160;
  s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s->graphId = 0;
  s->graphNodeId = 0;

  ActivityBuffer b;
  // The external id arrives before the API record it belongs to (PLATFORM_NOTES).
  auto* e = b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e->externalId = 0xFEEDFACE12345ull;
  e->correlationId = 200;
  AddApi(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 200,
         1'700'000'000'000'000'500ull, 1'700'000'000'000'000'700ull);
  AddApi(&b, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 201,
         1'700'000'000'000'000'550ull, 1'700'000'000'000'000'650ull);
  AddApi(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 300,
         1'700'000'000'000'010'000ull, 1'700'000'000'000'010'300ull);

  HeapRing ring;
  DecodeContext ctx;
  const DecodeStats sa = DecodeActivityBuffer(a.data(), a.size(), api_, ring.writer(), &ctx);
  const DecodeStats sb = DecodeActivityBuffer(b.data(), b.size(), api_, ring.writer(), &ctx);
  EXPECT_EQ(sb.records, 4u);
  EXPECT_EQ(sb.apis, 3u);
  EXPECT_EQ(sb.external, 1u);
  EXPECT_EQ(sa.records, 5u);
  EXPECT_EQ(sa.kernels, 3u);
  EXPECT_EQ(sa.memcpys, 1u);
  EXPECT_EQ(sa.memsets, 1u);
  EXPECT_EQ(sa.bad + sb.bad + sa.skipped + sb.skipped + sa.ring_full + sb.ring_full, 0u);

  const std::vector<Rec> recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 9u);
  // Decode order, not time order: A's records, then B's.
  const std::vector<uint16_t> types = {ring::kKernel, ring::kKernel, ring::kKernel,
                                       ring::kMemcpy, ring::kMemset, ring::kExternalCorrelation,
                                       ring::kApi, ring::kApi, ring::kApi};
  for (size_t i = 0; i < types.size(); ++i) EXPECT_EQ(recs[i].type, types[i]) << i;

  const auto ext = recs[5].As<ring::ExternalCorrelationRecord>();
  EXPECT_EQ(ext.external_id, 0xFEEDFACE12345ull);
  EXPECT_EQ(ext.correlation_id, 200u);
  EXPECT_EQ(ext.external_kind, static_cast<uint32_t>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0));
  EXPECT_EQ(recs[5].bytes.size(), sizeof(ring::ExternalCorrelationRecord));

  const auto api0 = recs[6].As<ring::ApiRecord>();
  EXPECT_EQ(api0.start_ns, 1'700'000'000'000'000'500ll);
  EXPECT_EQ(api0.end_ns, 1'700'000'000'000'000'700ll);
  EXPECT_EQ(api0.correlation_id, 200u);
  EXPECT_EQ(api0.cbid, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(api0.tid, 4343u);
  EXPECT_EQ(api0.pid, 4242u);
  EXPECT_EQ(api0.domain, ring::kApiRuntime);
  EXPECT_EQ(recs[6].Inline<ring::ApiRecord>(api0.name_len), "cudaLaunchKernel");
  EXPECT_EQ(recs[6].bytes.size(), ring::AlignRecord(sizeof(ring::ApiRecord) + api0.name_len));

  const auto api1 = recs[7].As<ring::ApiRecord>();
  EXPECT_EQ(api1.domain, ring::kApiDriver);
  EXPECT_EQ(api1.correlation_id, 201u);
  EXPECT_EQ(api1.cbid, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(recs[7].Inline<ring::ApiRecord>(api1.name_len), "cuLaunchKernel");

  const auto api2 = recs[8].As<ring::ApiRecord>();
  EXPECT_EQ(api2.correlation_id, 300u);
  EXPECT_EQ(api2.start_ns, 1'700'000'000'000'010'000ll);
  EXPECT_EQ(api2.end_ns, 1'700'000'000'000'010'300ll);
  EXPECT_EQ(recs[8].Inline<ring::ApiRecord>(api2.name_len), "cudaGraphLaunch");

  const auto k0 = recs[0].As<ring::KernelRecord>();
  EXPECT_EQ(recs[0].flags, 0);
  EXPECT_EQ(k0.start_ns, 1'700'000'000'000'001'000ll);
  EXPECT_EQ(k0.end_ns, 1'700'000'000'000'009'500ll);
  EXPECT_EQ(k0.correlation_id, 200u);
  EXPECT_EQ(k0.graph_id, 0u);
  EXPECT_EQ(k0.graph_node_id, 0u);
  EXPECT_EQ(k0.device_id, 3u);
  EXPECT_EQ(k0.context_id, 7u);
  EXPECT_EQ(k0.stream_id, 13u);
  EXPECT_EQ(k0.grid_x, 120); EXPECT_EQ(k0.grid_y, 2); EXPECT_EQ(k0.grid_z, 1);
  EXPECT_EQ(k0.block_x, 256); EXPECT_EQ(k0.block_y, 1); EXPECT_EQ(k0.block_z, 1);
  EXPECT_EQ(k0.registers_per_thread, 96);
  EXPECT_EQ(k0.static_shared_bytes, 16384u);
  EXPECT_EQ(k0.dynamic_shared_bytes, 49152u);
  EXPECT_EQ(k0.local_bytes_per_thread, 24u);
  EXPECT_EQ(recs[0].Inline<ring::KernelRecord>(k0.name_len), kPlain);

  const auto k1 = recs[1].As<ring::KernelRecord>();
  const auto k2 = recs[2].As<ring::KernelRecord>();
  EXPECT_EQ(k1.correlation_id, 300u);
  EXPECT_EQ(k2.correlation_id, 300u);
  EXPECT_EQ(k1.graph_id, 17u);
  EXPECT_EQ(k2.graph_id, 17u);
  EXPECT_EQ(k1.graph_node_id, 0x0000001100000001ull);
  EXPECT_EQ(k2.graph_node_id, 0x0000001100000002ull);
  EXPECT_EQ(k1.stream_id, 14u);
  EXPECT_EQ(k1.start_ns, 1'700'000'000'000'020'000ll);
  EXPECT_EQ(k1.end_ns, 1'700'000'000'000'025'000ll);
  EXPECT_EQ(k2.start_ns, 1'700'000'000'000'025'100ll);
  EXPECT_EQ(k2.end_ns, 1'700'000'000'000'026'000ll);
  EXPECT_EQ(k1.block_x, 32);
  EXPECT_EQ(k2.grid_x, 64);
  EXPECT_EQ(k2.block_x, 128);
  EXPECT_EQ(k1.registers_per_thread, 32);
  EXPECT_EQ(k2.registers_per_thread, 16);
  EXPECT_EQ(recs[1].Inline<ring::KernelRecord>(k1.name_len), kGraph1);
  EXPECT_EQ(recs[2].Inline<ring::KernelRecord>(k2.name_len), kGraph2);

  const auto mc = recs[3].As<ring::MemcpyRecord>();
  EXPECT_EQ(mc.start_ns, 1'700'000'000'000'000'100ll);
  EXPECT_EQ(mc.end_ns, 1'700'000'000'000'000'900ll);
  EXPECT_EQ(mc.bytes, 1u << 20);
  EXPECT_EQ(mc.correlation_id, 150u);
  EXPECT_EQ(mc.graph_id, 18u);
  EXPECT_EQ(mc.graph_node_id, 99u);
  EXPECT_EQ(mc.device_id, 3u);
  EXPECT_EQ(mc.context_id, 7u);
  EXPECT_EQ(mc.stream_id, 13u);
  EXPECT_EQ(mc.copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(mc.src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(mc.dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);

  const auto ms = recs[4].As<ring::MemsetRecord>();
  EXPECT_EQ(ms.start_ns, 1'700'000'000'000'030'000ll);
  EXPECT_EQ(ms.end_ns, 1'700'000'000'000'030'400ll);
  EXPECT_EQ(ms.bytes, 4096u);
  EXPECT_EQ(ms.value, 0xABu);
  EXPECT_EQ(ms.correlation_id, 160u);
  EXPECT_EQ(ms.device_id, 3u);
  EXPECT_EQ(ms.context_id, 7u);
  EXPECT_EQ(ms.stream_id, 15u);
  EXPECT_EQ(ms.memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(ms.graph_id, 0u);

  EXPECT_EQ(ring.header()->records_committed.load(), 9u);
  for (uint32_t c = 0; c < ring::kDropCauseCount; ++c) {
    EXPECT_EQ(ring.drops(ring::DropCause(c)), 0u);
  }
}

TEST_F(CuptiDecodeTest, LongKernelNameIsCutAndFlagged) {
  const std::string name(ring::kMaxInlineName + 100, 'x');
  ActivityBuffer a;
  AddKernel(&a, 1, name.c_str());
  AddKernel(&a, 2, nullptr);  // CUPTI may leave a name unset: an empty name, not a crash
  HeapRing ring;
  DecodeContext ctx;
  DecodeActivityBuffer(a.data(), a.size(), api_, ring.writer(), &ctx);
  const std::vector<Rec> recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 2u);
  const auto k = recs[0].As<ring::KernelRecord>();
  EXPECT_EQ(k.name_len, ring::kMaxInlineName);
  EXPECT_EQ(recs[0].flags & ring::kFlagNameTruncated, ring::kFlagNameTruncated);
  EXPECT_EQ(recs[0].Inline<ring::KernelRecord>(k.name_len), name.substr(0, ring::kMaxInlineName));
  EXPECT_EQ(ring.header()->names_truncated.load(), 1u);
  EXPECT_EQ(recs[1].As<ring::KernelRecord>().name_len, 0);
  EXPECT_EQ(recs[1].flags, 0);
}

// Kinds opmap does not record are stepped over; bytes that do not walk are one kBadRecord
// and end the buffer, keeping what came before.
TEST_F(CuptiDecodeTest, SkipsOtherKindsAndCountsMalformedTail) {
  ActivityBuffer a;
  auto* o = a.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o->start = 1;
  o->end = 2;
  AddKernel(&a, 5, "k");
  a.AddRaw(64, 0xEE);  // kind 0xEEEEEEEE: not a record
  AddKernel(&a, 6, "after_garbage");
  HeapRing ring;
  DecodeContext ctx;
  const DecodeStats st = DecodeActivityBuffer(a.data(), a.size(), api_, ring.writer(), &ctx);
  EXPECT_EQ(st.skipped, 1u);
  EXPECT_EQ(st.kernels, 1u);
  EXPECT_EQ(st.bad, 1u);
  EXPECT_EQ(ring.drops(ring::kBadRecord), 1u);
  const std::vector<Rec> recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].As<ring::KernelRecord>().correlation_id, 5u);
  EXPECT_EQ(CountActivityRecords(a.data(), a.size(), api_), 2u);
}

TEST_F(CuptiDecodeTest, FullRingCountsDropsAndKeepsGoing) {
  ActivityBuffer a;
  const std::string name(1000, 'n');
  for (int i = 0; i < 200; ++i) AddKernel(&a, i + 1, name.c_str());  // ~220 KB of records
  HeapRing ring(64 * 1024);
  DecodeContext ctx;
  const DecodeStats st = DecodeActivityBuffer(a.data(), a.size(), api_, ring.writer(), &ctx);
  EXPECT_EQ(st.kernels, 200u);
  EXPECT_GT(st.ring_full, 0u);
  EXPECT_EQ(ring.drops(ring::kRingFull), st.ring_full);
  const std::vector<Rec> recs = ring.ReadAll();
  EXPECT_EQ(recs.size() + st.ring_full, 200u);
  // What got in is the head of the buffer, in order.
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i].As<ring::KernelRecord>().correlation_id, i + 1);
  }
}

TEST_F(CuptiDecodeTest, EmptyBufferAndNoRing) {
  HeapRing ring;
  DecodeContext ctx;
  EXPECT_EQ(DecodeActivityBuffer(nullptr, 0, api_, ring.writer(), &ctx).records, 0u);
  ActivityBuffer a;
  AddKernel(&a, 9, "k");
  // No window open: counted in the stats, nothing written, nothing crashes.
  const DecodeStats st = DecodeActivityBuffer(a.data(), a.size(), api_, nullptr, &ctx);
  EXPECT_EQ(st.kernels, 1u);
  EXPECT_TRUE(ring.ReadAll().empty());
}

TEST(StripVersionSuffixTest, CutsOnlyAVersionSuffix) {
  EXPECT_EQ(StripVersionSuffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(StripVersionSuffix("cudaLaunchKernel_ptsz_v7000"), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(StripVersionSuffix("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(StripVersionSuffix("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(StripVersionSuffix("cuda_v"), "cuda_v");
  EXPECT_EQ(StripVersionSuffix("_v1"), "");
  EXPECT_EQ(StripVersionSuffix("x1"), "x1");
  EXPECT_EQ(StripVersionSuffix(""), "");
}

}  // namespace
}  // namespace opmap::inject
