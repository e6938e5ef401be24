// CaptureTraceBuilder on records built with abi/ring_records.h's structs, then the real
// mapping: kernel → launch (correlation id) → innermost NVTX range on the launching
// thread, as the live path will run it.
#include "analysis/import/capture_trace.h"

#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "agent/transport/capture_file.h"
#include "analysis/import/capture_import.h"
#include "abi/ring_records.h"
#include "tests/testing/shared_data.h"
#include "analysis/mapping/kernel_mapper.h"
#include "gtest/gtest.h"
#include "tests/unit/capture/ring_record_bytes.h"

namespace opmap::analysis::capture_trace_test {
namespace {

using namespace opmap::ring;  // NOLINT

using test_records::Record;

std::string Range(int64_t start, int64_t end, uint32_t tid, uint16_t depth,
                  std::string_view name) {
  RangeRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.tid = tid;
  r.depth = depth;
  r.name_len = static_cast<uint16_t>(name.size());
  return Record(kRange, r, name);
}

std::string Api(int64_t start, int64_t end, uint32_t tid, uint64_t correlation) {
  return test_records::Api(start, end, tid, correlation, "cudaLaunchKernel");
}

std::string Kernel(int64_t start, int64_t end, uint64_t correlation, std::string_view name) {
  KernelRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.correlation_id = correlation;
  r.device_id = 0;
  r.stream_id = 7;
  r.grid_x = 128;
  r.grid_y = 2;
  r.grid_z = 1;
  r.block_x = 256;
  r.block_y = 1;
  r.block_z = 1;
  r.registers_per_thread = 64;
  r.static_shared_bytes = 1024;
  r.dynamic_shared_bytes = 4096;
  r.name_len = static_cast<uint16_t>(name.size());
  return Record(kKernel, r, name);
}

TEST(CaptureTrace, KernelsMapToTheInnermostNvtxRangeOfTheirLaunch) {
  CaptureTraceBuilder b(4242);
  // Out of order, as CUPTI's per-thread buffers deliver them: kernels first.
  b.Add(Kernel(5000, 9000, 11, "gemm_kernel"));
  b.Add(Kernel(9100, 9600, 12, "triad_kernel"));
  b.Add(Range(1000, 8000, 77, 0, "decoder_layer.0"));
  b.Add(Range(1100, 2000, 77, 1, "demo::qkv_linear{flops=2097152,bytes=196608}"));
  b.Add(Range(2100, 3000, 77, 1, "aten::mul, seq = 3, op_id = 7"));
  b.Add(Api(1200, 1300, 77, 11));  // inside qkv_linear
  b.Add(Api(7000, 7100, 77, 12));  // inside the layer only
  ExternalCorrelationRecord ext{};
  ext.correlation_id = 11;
  ext.external_id = 99;
  ext.external_kind = 2;
  b.Add(Record(kExternalCorrelation, ext));
  CaptureResult r = std::move(b).Finish();

  ASSERT_EQ(r.bad_records, 0) << r.first_bad_record;
  ASSERT_EQ(r.trace.gpu_events.size(), 2u);
  ASSERT_EQ(r.trace.ranges.size(), 3u);
  const analysis::Range& qkv = r.trace.ranges[1];
  EXPECT_EQ(r.trace.strings.Get(qkv.name), "demo::qkv_linear");
  EXPECT_EQ(qkv.flops, 2097152);
  EXPECT_EQ(qkv.bytes, 196608);
  EXPECT_EQ(qkv.dur_ns, 900);
  EXPECT_EQ(qkv.thread, 77);
  EXPECT_EQ(qkv.process, 4242);
  EXPECT_EQ(r.trace.strings.Get(r.trace.ranges[2].name), "aten::mul");

  const analysis::GpuEvent& gemm = r.trace.gpu_events[0];
  EXPECT_EQ(gemm.dur_ns, 4000);
  EXPECT_EQ(gemm.stream, 7);
  EXPECT_EQ(gemm.grid, (std::array<int32_t, 3>{128, 2, 1}));
  EXPECT_EQ(gemm.block, (std::array<int32_t, 3>{256, 1, 1}));
  EXPECT_EQ(gemm.registers_per_thread, 64);
  EXPECT_EQ(gemm.shared_memory_bytes, 5120);
  EXPECT_EQ(gemm.external_id, 99);
  EXPECT_EQ(r.trace.api_calls[0].external_id, 99);
  EXPECT_EQ(r.trace.gpu_events[1].external_id, analysis::kNone);

  const analysis::MappingResult m = analysis::MapGpuEvents(r.trace);
  EXPECT_EQ(m.events[0].rule, analysis::MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[0].range, 1);  // qkv_linear, not the enclosing layer
  EXPECT_EQ(m.events[1].rule, analysis::MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[1].range, 0);  // the layer
}

TEST(CaptureTrace, StartEndRangesPairAcrossThreads) {
  CaptureTraceBuilder b(1);
  RangeStartRecord s{};
  s.range_id = 5;
  s.start_ns = 100;
  s.tid = 10;
  s.name_len = 7;
  b.Add(Record(kRangeStart, s, "request"));
  RangeEndRecord e{};
  e.range_id = 5;
  e.end_ns = 350;
  e.tid = 11;
  b.Add(Record(kRangeEnd, e));
  e.range_id = 6;  // its start was before the capture
  b.Add(Record(kRangeEnd, e));
  s.range_id = 8;  // never ends
  b.Add(Record(kRangeStart, s, "request"));
  CaptureResult r = std::move(b).Finish();
  ASSERT_EQ(r.trace.ranges.size(), 1u);
  EXPECT_EQ(r.trace.ranges[0].dur_ns, 250);
  EXPECT_EQ(r.trace.ranges[0].thread, 10);
  EXPECT_EQ(r.unmatched_ends, 1);
  EXPECT_EQ(r.open_ranges, 1);
}

// A layerwise output marker (import/nvtx_names.h) as a start/end range: dropped and counted
// at its end, not an unmatched end; a push/pop one the same.
TEST(CaptureTrace, OutputMarkersAreDroppedAndCounted) {
  CaptureTraceBuilder b(1);
  const std::string marker = "{'Module': 'top.norm', 'Outputs': [[8, 64]]}";
  RangeStartRecord s{};
  s.range_id = 5;
  s.start_ns = 100;
  s.tid = 10;
  s.name_len = static_cast<uint32_t>(marker.size());
  b.Add(Record(kRangeStart, s, marker));
  RangeEndRecord e{};
  e.range_id = 5;
  e.end_ns = 101;
  e.tid = 10;
  b.Add(Record(kRangeEnd, e));
  RangeRecord pushed{};
  pushed.start_ns = 200;
  pushed.end_ns = 201;
  pushed.tid = 10;
  pushed.name_len = static_cast<uint32_t>(marker.size());
  b.Add(Record(kRange, pushed, marker));
  CaptureResult r = std::move(b).Finish();
  EXPECT_TRUE(r.trace.ranges.empty());
  EXPECT_EQ(r.output_markers, 2);
  EXPECT_EQ(r.unmatched_ends, 0);
  EXPECT_EQ(r.open_ranges, 0);
}

TEST(CaptureTrace, MemoryOpsStatusStallsAndWindows) {
  CaptureTraceBuilder b(1);
  MemcpyRecord c{};
  c.start_ns = 10;
  c.end_ns = 30;
  c.bytes = 4096;
  c.copy_kind = 1;
  c.src_kind = 1;
  c.dst_kind = 3;
  b.Add(Record(kMemcpy, c));
  MemsetRecord m{};
  m.start_ns = 40;
  m.end_ns = 45;
  m.bytes = 64;
  m.memory_kind = 3;
  b.Add(Record(kMemset, m));
  StatusRecord st{};
  st.component = kComponentCupti;
  st.code = kStatusUnavailable;
  st.message_len = 14;
  b.Add(Record(kStatus, st, "no CUDA driver"));
  StallRecord sr{};
  sr.samples = 12;
  sr.function_len = 4;
  sr.reason_len = 15;
  b.Add(Record(kStall, sr, "gemmlong_scoreboard"));
  WindowRecord w{};
  w.window_id = 3;
  w.time_ns = 5;
  w.mark = kWindowBegin;
  b.Add(Record(kWindow, w));
  w.time_ns = 50;
  w.mark = kWindowEnd;
  b.Add(Record(kWindow, w));
  CaptureResult r = std::move(b).Finish();
  ASSERT_EQ(r.trace.gpu_events.size(), 2u);
  EXPECT_EQ(r.trace.strings.Get(r.trace.gpu_events[0].name), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(r.trace.gpu_events[0].bytes, 4096);
  EXPECT_EQ(r.trace.strings.Get(r.trace.gpu_events[1].name), "Memset (Device)");
  ASSERT_EQ(r.statuses.size(), 1u);
  EXPECT_EQ(r.statuses[0].message, "no CUDA driver");
  ASSERT_EQ(r.trace.stalls.size(), 1u);
  EXPECT_EQ(r.trace.strings.Get(r.trace.stalls[0].function), "gemm");
  EXPECT_EQ(r.trace.strings.Get(r.trace.stalls[0].reason), "long_scoreboard");
  EXPECT_EQ(r.trace.stalls[0].value, 12.0);
  EXPECT_EQ(r.trace.stalls[0].unit, opmap::analysis::StallUnit::kSamples);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].begin_ns, 5);
  EXPECT_EQ(r.windows[0].end_ns, 50);
}

// CUPTI names kernels and PC-sampling functions by mangled symbol; the capture demangles
// both the same way, so stall samples join their kernels and names read like Kineto's.
TEST(CaptureTrace, KernelAndStallNamesAreDemangledAndJoin) {
  CaptureTraceBuilder b(1);
  const std::string mangled = "_Z24triad_elementwise_kernelPKfS0_Pff";
  b.Add(Kernel(10, 20, 1, mangled));
  b.Add(Kernel(30, 40, 2, mangled));
  b.Add(Kernel(50, 60, 3, "not_mangled_kernel"));
  StallRecord sr{};
  sr.samples = 9;
  sr.function_len = static_cast<uint16_t>(mangled.size());
  sr.reason_len = 15;
  b.Add(Record(kStall, sr, mangled + "long_scoreboard"));
  CaptureResult r = std::move(b).Finish();
  const std::string want = "triad_elementwise_kernel(float const*, float const*, float*, float)";
  ASSERT_EQ(r.trace.gpu_events.size(), 3u);
  EXPECT_EQ(r.trace.strings.Get(r.trace.gpu_events[0].name), want);
  EXPECT_EQ(r.trace.gpu_events[0].name, r.trace.gpu_events[1].name);
  EXPECT_EQ(r.trace.strings.Get(r.trace.gpu_events[2].name), "not_mangled_kernel");
  ASSERT_EQ(r.trace.stalls.size(), 1u);
  EXPECT_EQ(r.trace.stalls[0].function, r.trace.gpu_events[0].name);
}

TEST(CaptureTrace, BadRecordsAreCountedNotTrusted) {
  CaptureTraceBuilder b(1);
  std::string k = Kernel(10, 20, 1, "abc");
  k.resize(sizeof(KernelRecord) + 1);  // name_len 3, only 1 byte present
  b.Add(k);
  b.Add(Kernel(20, 10, 1, "x"));     // ends before it starts
  b.Add(std::string(4, '\0'));       // shorter than a header
  b.Add(Range(1, 2, 1, 0, "ok"));
  // Fuzz finding 12: a sample count no double holds exactly (the encoder refuses those,
  // and with them the whole window) is one bad record; a count of 2^53 is kept.
  StallRecord sr{};
  sr.samples = ~uint64_t{0};
  sr.function_len = 4;
  sr.reason_len = 15;
  b.Add(Record(kStall, sr, "gemmlong_scoreboard"));
  sr.samples = uint64_t{1} << 53;
  b.Add(Record(kStall, sr, "gemmlong_scoreboard"));
  CaptureResult r = std::move(b).Finish();
  EXPECT_EQ(r.bad_records, 4);
  ASSERT_EQ(r.trace.stalls.size(), 1u);
  EXPECT_EQ(r.trace.stalls[0].value, 9007199254740992.0);
  EXPECT_NE(r.first_bad_record.find("overruns"), std::string::npos) << r.first_bad_record;
  EXPECT_EQ(r.trace.gpu_events.size(), 0u);
  EXPECT_EQ(r.trace.ranges.size(), 1u);
}

}  // namespace
}  // namespace opmap::analysis::capture_trace_test

namespace opmap::analysis::capture_trace_test {
namespace {

TEST(CaptureImport, FileBecomesATraceWithUnavailableAndDropCounters) {
  const std::string path = ::testing::TempDir() + "/capture_import_test.opcap";
  absl::StatusOr<transport::CaptureFileWriter> w = transport::CaptureFileWriter::Create(path, 77, 1 << 20, "model=m\n");
  ASSERT_TRUE(w.ok()) << w.status();
  auto append = [&](const std::string& r) {
    ASSERT_TRUE(w->Append(std::span<const uint8_t>(
                              reinterpret_cast<const uint8_t*>(r.data()), r.size()))
                    .ok());
  };
  append(Range(100, 900, 5, 0, "demo::qkv_linear{flops=10,bytes=20}"));
  append(Api(200, 300, 5, 9));
  append(Kernel(400, 700, 9, "gemm"));
  StatusRecord st{};
  st.component = kComponentCupti;
  st.code = kStatusUnavailable;
  st.message_len = 14;
  append(Record(kStatus, st, "no CUDA driver"));
  capfile::TrailerRecord trailer{};
  trailer.drops[kRingFull] = 3;
  ASSERT_TRUE(w->Finish(trailer).ok());

  const std::string bytes = opmap::testing::ReadFileOrDie(path);
  ASSERT_TRUE(LooksLikeCaptureFile(bytes));
  absl::StatusOr<analysis::Trace> t = ImportCaptureFile(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.format, "opmap-capture");
  EXPECT_EQ(t->info.process, 77);
  ASSERT_EQ(t->gpu_events.size(), 1u);
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->ranges[0].flops, 10);
  ASSERT_EQ(t->info.unavailable.size(), 1u);
  EXPECT_EQ(t->info.unavailable[0].first, "cupti");
  EXPECT_EQ(t->info.unavailable[0].second, "no CUDA driver");
  int64_t ring_full = -1;
  for (const auto& [name, value] : t->info.counters) {
    if (name == "drops.ring_full") ring_full = value;
  }
  EXPECT_EQ(ring_full, 3);
  const analysis::MappingResult m = analysis::MapGpuEvents(*t);
  EXPECT_EQ(m.events[0].rule, analysis::MappingRule::kLaunchNesting);
  EXPECT_FALSE(ImportCaptureFile(bytes.substr(0, 10)).ok());
}


// A window opened before the first NVTX call says NVTX has not attached, then that it has:
// the latest status of a component holds (a file full of ranges is not "nvtx unavailable");
// a component still unavailable at the end is reported.
TEST(CaptureTrace, TheLatestStatusOfAComponentHolds) {
  CaptureTraceBuilder b(7);
  StatusRecord st{};
  st.component = kComponentNvtx;
  st.code = kStatusUnavailable;
  st.message_len = 19;
  b.Add(Record(kStatus, st, "no NVTX call so far"));
  st.code = kStatusOk;
  st.message_len = 8;
  b.Add(Record(kStatus, st, "attached"));
  st.component = kComponentCupti;
  st.code = kStatusUnavailable;
  st.message_len = 14;
  b.Add(Record(kStatus, st, "no CUDA driver"));
  const analysis::Trace t = FinishCaptureTrace(std::move(b).Finish());
  ASSERT_EQ(t.info.unavailable.size(), 1u);
  EXPECT_EQ(t.info.unavailable[0].first, "cupti");
  EXPECT_EQ(t.info.unavailable[0].second, "no CUDA driver");
}

}  // namespace
}  // namespace opmap::analysis::capture_trace_test
