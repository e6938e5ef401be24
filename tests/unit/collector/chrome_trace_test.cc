// analysis/report/chrome_trace: exact text for a tiny trace, valid JSON (simdjson), and a
// round trip through the Kineto importer (the same events, exact ns).
#include "analysis/report/chrome_trace.h"

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "tests/testing/shared_data.h"
#include "common/text/units.h"

namespace opmap::analysis {
namespace {

Trace TinyTrace() {
  Trace t;
  Range r;
  r.start_ns = 1000;
  r.dur_ns = 5000;
  r.name = t.strings.Intern("aten::mm");
  r.kind = RangeKind::kCpuOp;
  r.process = 42;
  r.thread = 7;
  r.external_id = 3;
  t.ranges.push_back(r);
  ApiCall a;
  a.start_ns = 1500;
  a.dur_ns = 200;
  a.name = t.strings.Intern("cudaLaunchKernel");
  a.process = 42;
  a.thread = 7;
  a.correlation = 11;
  t.api_calls.push_back(a);
  GpuEvent k;
  k.start_ns = 2'000'123;
  k.dur_ns = 1'001;
  k.name = t.strings.Intern("sm90_gemm \"bf16\"");
  k.device = 0;
  k.stream = 7;
  k.correlation = 11;
  k.external_id = 3;
  k.grid = {1, 2, 3};
  k.block = {128, 1, 1};
  k.registers_per_thread = 32;
  k.shared_memory_bytes = 0;
  t.gpu_events.push_back(k);
  GpuEvent m;
  m.start_ns = 3000;
  m.dur_ns = 10;
  m.name = t.strings.Intern("Memcpy HtoD (Pageable -> Device)");
  m.kind = GpuEventKind::kMemcpy;
  m.device = 1;
  m.stream = 9;
  m.bytes = 4096;
  t.gpu_events.push_back(m);
  return t;
}

TEST(ChromeTraceTest, FormatsMicrosFromIntegerNanos) {
  EXPECT_EQ(text::FormatNanosAsMicros(0), "0.000");
  EXPECT_EQ(text::FormatNanosAsMicros(1), "0.001");
  EXPECT_EQ(text::FormatNanosAsMicros(999), "0.999");
  EXPECT_EQ(text::FormatNanosAsMicros(1234567), "1234.567");
  EXPECT_EQ(text::FormatNanosAsMicros(-1500), "-1.500");
  EXPECT_EQ(text::FormatNanosAsMicros(1'700'000'000'123'456'789), "1700000000123456.789");
  EXPECT_EQ(text::FormatNanosAsMicros(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(text::FormatNanosAsMicros(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

TEST(ChromeTraceTest, ExactTextForTinyTrace) {
  ChromeTraceResult r = RenderChromeTrace(TinyTrace());
  const std::string expected =
      "{\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":42,\"tid\":0,\"args\":{\"name\":\"host\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1000000000,\"tid\":0,\"args\":{\"name\":\"GPU 0\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1000000000,\"tid\":7,\"args\":{\"name\":\"stream 7\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1000000001,\"tid\":0,\"args\":{\"name\":\"GPU 1\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1000000001,\"tid\":9,\"args\":{\"name\":\"stream 9\"}},\n"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":42,\"tid\":7,\"ts\":1.000,"
      "\"dur\":5.000,\"args\":{\"External id\":3}},\n"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":42,\"tid\":7,"
      "\"ts\":1.500,\"dur\":0.200,\"args\":{\"correlation\":11}},\n"
      "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
      "\"pid\":1000000001,\"tid\":9,\"ts\":3.000,\"dur\":0.010,\"args\":{\"device\":1,"
      "\"stream\":9,\"bytes\":4096}},\n"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm \\\"bf16\\\"\",\"pid\":1000000000,"
      "\"tid\":7,\"ts\":2000.123,\"dur\":1.001,\"args\":{\"device\":0,\"stream\":7,"
      "\"correlation\":11,\"External id\":3,\"grid\":[1,2,3],\"block\":[128,1,1],"
      "\"registers per thread\":32,\"shared memory\":0}}\n"
      "],\"displayTimeUnit\":\"ns\"}\n";
  EXPECT_EQ(r.json, expected);
  EXPECT_EQ(r.events, 4u);
  EXPECT_FALSE(r.truncated);
}

TEST(ChromeTraceTest, LabelsAndGpuNames) {
  ChromeTraceSource source;
  source.label = "node-1 llama@r42";
  source.gpu_names = {"NVIDIA H200"};
  std::string json = RenderChromeTrace(TinyTrace(), {}, source).json;
  EXPECT_NE(json.find("\"args\":{\"name\":\"host node-1 llama@r42\"}"), std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"name\":\"GPU 0 (NVIDIA H200) node-1 llama@r42\"}"),
            std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"name\":\"GPU 1 node-1 llama@r42\"}"), std::string::npos);
  EXPECT_EQ(json.find("opmap_resource"), std::string::npos);  // none given, none written
  source.resource = {{"framework", "pytorch"}, {"driver_version", "550.54.15"}};
  json = RenderChromeTrace(TinyTrace(), {}, source).json;
  EXPECT_NE(json.find("\"name\":\"opmap_resource\",\"pid\":"), std::string::npos) << json;
  EXPECT_NE(json.find("\"args\":{\"framework\":\"pytorch\",\"driver_version\":\"550.54.15\"}}"),
            std::string::npos) << json;
}

// simdjson (DOM) accepts it: valid JSON and valid UTF-8. Returns the "X" event count.
size_t ParseAndCountEvents(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  auto err = parser.parse(json).get(doc);
  EXPECT_EQ(err, simdjson::SUCCESS) << simdjson::error_message(err);
  if (err) return 0;
  std::string_view unit;
  EXPECT_EQ(doc["displayTimeUnit"].get(unit), simdjson::SUCCESS);
  EXPECT_EQ(unit, "ns");
  simdjson::dom::array events;
  EXPECT_EQ(doc["traceEvents"].get(events), simdjson::SUCCESS);
  size_t x = 0;
  for (simdjson::dom::element e : events) {
    std::string_view ph;
    EXPECT_EQ(e["ph"].get(ph), simdjson::SUCCESS);
    if (ph == "X") ++x;
  }
  return x;
}

TEST(ChromeTraceTest, EscapesNamesAndReplacesInvalidUtf8) {
  Trace t = TinyTrace();
  t.gpu_events[0].name = t.strings.Intern(std::string("k\x01\n\t\\\"\xff\xc3(\xe2\x82\xac \xf0\x9f\x98\x80", 17));
  ChromeTraceResult r = RenderChromeTrace(t);
  EXPECT_EQ(ParseAndCountEvents(r.json), 4u);
  EXPECT_NE(r.json.find("\"name\":\"k\\u0001\\n\\t\\\\\\\"\xEF\xBF\xBD\xEF\xBF\xBD(\xe2\x82\xac "
                        "\xf0\x9f\x98\x80\""),
            std::string::npos)
      << r.json;
}

TEST(ChromeTraceTest, RoundTripThroughKinetoImporter) {
  Trace original = TinyTrace();
  Range nvtx;
  nvtx.start_ns = 900;
  nvtx.dur_ns = 6000;
  nvtx.name = original.strings.Intern("layer.0");
  nvtx.kind = RangeKind::kNvtx;
  nvtx.process = 42;
  nvtx.thread = 7;
  original.ranges.push_back(nvtx);
  ChromeTraceResult r = RenderChromeTrace(original);
  EXPECT_EQ(ParseAndCountEvents(r.json), 5u);

  std::string json = r.json;
  absl::StatusOr<Trace> back = ImportKinetoJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->gpu_events.size(), original.gpu_events.size());
  ASSERT_EQ(back->api_calls.size(), original.api_calls.size());
  ASSERT_EQ(back->ranges.size(), original.ranges.size());
  // Written in start order: kernel (2000123) after memcpy (3000).
  const GpuEvent& k = back->gpu_events[1];
  EXPECT_EQ(k.start_ns, 2'000'123);
  EXPECT_EQ(k.dur_ns, 1'001);
  EXPECT_EQ(back->strings.Get(k.name), "sm90_gemm \"bf16\"");
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 11);
  EXPECT_EQ(k.external_id, 3);
  EXPECT_EQ(k.grid, (std::array<int32_t, 3>{1, 2, 3}));
  EXPECT_EQ(k.block, (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 32);
  const GpuEvent& m = back->gpu_events[0];
  EXPECT_EQ(m.kind, GpuEventKind::kMemcpy);
  EXPECT_EQ(m.device, 1);
  EXPECT_EQ(m.stream, 9);
  EXPECT_EQ(m.bytes, 4096);
  EXPECT_EQ(back->api_calls[0].correlation, 11);
  EXPECT_EQ(back->api_calls[0].process, 42);
  EXPECT_EQ(back->api_calls[0].thread, 7);
  // NVTX comes back as user_annotation: both are operator ranges to the mapper.
  EXPECT_EQ(back->ranges[0].kind, RangeKind::kUserAnnotation);
  EXPECT_EQ(back->ranges[0].start_ns, 900);
  EXPECT_EQ(back->ranges[1].kind, RangeKind::kCpuOp);
  EXPECT_EQ(back->ranges[1].external_id, 3);

  MappingResult before = MapGpuEvents(original);
  MappingResult after = MapGpuEvents(*back);
  EXPECT_EQ(before.by_rule, after.by_rule);
}

TEST(ChromeTraceTest, TimeRangeAndMaxEvents) {
  ChromeTraceOptions options;
  options.start_ns = 1500;
  options.end_ns = 3000;  // half-open: the memcpy at 3000 is out
  ChromeTraceResult r = RenderChromeTrace(TinyTrace(), options);
  EXPECT_EQ(r.events, 1u);  // the API call
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(ParseAndCountEvents(r.json), 1u);

  ChromeTraceOptions few;
  few.max_events = 2;
  r = RenderChromeTrace(TinyTrace(), few);
  EXPECT_EQ(r.events, 2u);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(ParseAndCountEvents(r.json), 2u);
  EXPECT_EQ(r.json.find("\"cat\":\"kernel\""), std::string::npos);  // the latest is cut
  EXPECT_EQ(r.json.find("GPU"), std::string::npos);  // no metadata for cut processes

  r = RenderChromeTrace(Trace{});
  EXPECT_EQ(r.json, "{\"traceEvents\":[\n\n],\"displayTimeUnit\":\"ns\"}\n");
  EXPECT_EQ(ParseAndCountEvents(r.json), 0u);
}

TEST(ChromeTraceTest, SinkChunksConcatenateToTheDocument) {
  Trace big;
  StringId name = big.strings.Intern("k");
  for (int i = 0; i < 5000; ++i) {
    GpuEvent g;
    g.start_ns = 1000 * i;
    g.dur_ns = 500;
    g.name = name;
    g.stream = i % 3;
    big.gpu_events.push_back(g);
  }
  std::string whole = RenderChromeTrace(big).json;
  ChromeTraceOptions options;
  options.flush_bytes = 4096;
  std::string joined;
  int chunks = 0;
  ChromeTraceWriter writer(options, [&](std::string_view data) {
    EXPECT_GE(data.size(), 4096u);
    joined.append(data);
    ++chunks;
    return true;
  });
  EXPECT_TRUE(writer.Add(big));
  joined += writer.Finish();
  EXPECT_GT(chunks, 10);
  EXPECT_EQ(joined, whole);

  // Two traces in one document get separate GPU pids.
  ChromeTraceWriter two;
  two.Add(TinyTrace());
  two.Add(TinyTrace());
  std::string doc = two.Finish();
  EXPECT_EQ(two.events(), 8u);
  EXPECT_NE(doc.find("\"pid\":1000000256"), std::string::npos);
  EXPECT_EQ(ParseAndCountEvents(doc), 8u);

  // A sink that refuses stops the writer.
  ChromeTraceWriter stopped(options, [](std::string_view) { return false; });
  EXPECT_FALSE(stopped.Add(big));
}

TEST(ChromeTraceTest, InputDimsWrittenOnlyWhenWellFormed) {
  Trace t = TinyTrace();
  t.ranges[0].input_dims = t.strings.Intern("[[2, 3], [], [3]]");
  std::string json = RenderChromeTrace(t).json;
  EXPECT_NE(json.find("\"Input Dims\":[[2, 3], [], [3]]"), std::string::npos);
  EXPECT_EQ(ParseAndCountEvents(json), 4u);
  for (const char* bad : {"[[2, 3]", "[1,]", "{\"a\":1}", "[[01]]", "[1] x", "\"s\""}) {
    t.ranges[0].input_dims = t.strings.Intern(bad);
    json = RenderChromeTrace(t).json;
    EXPECT_EQ(json.find("Input Dims"), std::string::npos) << bad;
    EXPECT_EQ(ParseAndCountEvents(json), 4u) << bad;
  }
}

// A real PyTorch-profiler trace: import, export, import again -> the same events and
// the same kernel -> operator mapping.
TEST(ChromeTraceTest, SharedTraceRoundTrip) {
  const std::string rel = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED(rel);
  absl::StatusOr<Trace> original =
      ImportKinetoBytes(::opmap::testing::ReadFileOrDie(::opmap::testing::SharedPath(rel)));
  ASSERT_TRUE(original.ok()) << original.status();
  ChromeTraceResult r = RenderChromeTrace(*original);
  EXPECT_EQ(ParseAndCountEvents(r.json), r.events);
  std::string json = r.json;
  absl::StatusOr<Trace> back = ImportKinetoJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gpu_events.size(), original->gpu_events.size());
  EXPECT_EQ(back->api_calls.size(), original->api_calls.size());
  EXPECT_EQ(back->ranges.size(), original->ranges.size());
  EXPECT_EQ(r.events, original->gpu_events.size() + original->api_calls.size() +
                          original->ranges.size());
  int64_t sum_before = 0, sum_after = 0;
  for (const GpuEvent& g : original->gpu_events) sum_before += g.dur_ns;
  for (const GpuEvent& g : back->gpu_events) sum_after += g.dur_ns;
  EXPECT_EQ(sum_before, sum_after);
  EXPECT_EQ(MapGpuEvents(*original).by_rule, MapGpuEvents(*back).by_rule);
}

}  // namespace
}  // namespace opmap::analysis
