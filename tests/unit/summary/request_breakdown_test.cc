// The per-request breakdown (request_breakdown.h) and the tail explanation on small
// synthetic traces whose every nanosecond is known: which component each instant goes to,
// the payload join, one step annotated twice, a graph capture merge's replay thread, and a
// trace given in parts.
#include "analysis/summary/request_breakdown.h"

#include <map>
#include <string>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/tail_buckets.h"
#include "analysis/summary/tail_explanation.h"
#include "analysis/summary/trace_parts.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

int32_t AddRange(Trace& t, const char* name, int64_t start, int64_t end, int64_t thread,
                 int64_t payload = kNone, RangeKind kind = RangeKind::kNvtx) {
  Range r;
  r.start_ns = start;
  r.dur_ns = end - start;
  r.name = t.strings.Intern(name);
  r.kind = kind;
  r.process = 1;
  r.thread = thread;
  r.payload = payload;
  t.ranges.push_back(r);
  return static_cast<int32_t>(t.ranges.size() - 1);
}

// A launch call at [call, call + 2) on `thread` and its kernel (or copy) at [start, end).
void AddLaunch(Trace& t, const char* kernel, int64_t call, int64_t start, int64_t end,
               int64_t thread, GpuEventKind kind = GpuEventKind::kKernel) {
  const int64_t correlation = static_cast<int64_t>(t.api_calls.size()) + 1;
  ApiCall a;
  a.start_ns = call;
  a.dur_ns = 2;
  a.name = t.strings.Intern(kind == GpuEventKind::kKernel ? "cudaLaunchKernel" : "cudaMemcpyAsync");
  a.process = 1;
  a.thread = thread;
  a.correlation = correlation;
  t.api_calls.push_back(a);
  GpuEvent g;
  g.start_ns = start;
  g.dur_ns = end - start;
  g.name = t.strings.Intern(kernel);
  g.kind = kind;
  g.correlation = correlation;
  g.process = 1;
  t.gpu_events.push_back(g);
}

// Component description → ns, for one request.
std::map<std::string, int64_t> Parts(const RequestBreakdowns& b, size_t request) {
  std::map<std::string, int64_t> out;
  for (const auto& [c, ns] : b.requests[request].parts) {
    const RequestComponent& comp = b.components[c];
    out[std::string(RequestComponentKindName(comp.kind)) + " " +
        std::string(LayerTypeName(comp.layer_type)) + " " + comp.module] += ns;
  }
  return out;
}

RequestBreakdowns Breakdown(const Trace& t) {
  RequestBreakdownAccumulator acc;
  acc.Add(t, MapGpuEvents(t));
  return acc.Finish([](std::string_view op) {
    return ClassifyOperatorName(op).value_or(LayerType::kOther);
  });
}

TEST(RequestBreakdown, EveryInstantOfAGpuRequestHasOneComponent) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 100, 7, kNone, RangeKind::kUserAnnotation);
  AddRange(t, "aten::mm", 10, 30, 7, kNone, RangeKind::kCpuOp);
  AddLaunch(t, "sgemm_kernel", 12, 20, 50, 7);
  AddRange(t, "aten::copy_", 60, 70, 7, kNone, RangeKind::kCpuOp);
  AddLaunch(t, "Memcpy DtoH", 62, 90, 120, 7, GpuEventKind::kMemcpy);  // runs past the range
  AddLaunch(t, "other_thread_kernel", 15, 50, 60, 8);  // launched elsewhere: not this request's
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_EQ(b.requests[0].dur_ns, 100);
  EXPECT_EQ(b.requests[0].extent_ns, 120);  // to the copy's end
  EXPECT_EQ(b.requests[0].gpu_events, 2);
  const std::map<std::string, int64_t> want = {
      {"host_gap other ", 10 + 10},     // [0,10) and [50,60): the step's own code
      {"host_operator matmul ", 2},     // [10,12): aten::mm until its launch
      {"gpu_wait other ", 8 + 28},      // [12,20) and [62,90): launched, not yet running
      {"gpu matmul ", 30},              // [20,50)
      {"host_operator memcpy ", 2},     // [60,62): aten::copy_ until its launch
      {"copy memcpy ", 30},             // [90,120): past the range's end, in its extent
  };
  EXPECT_EQ(Parts(b, 0), want);
}

TEST(RequestBreakdown, PayloadJoinsARequestToTheRangesServingIt) {
  Trace t;
  // Arrival-to-completion range on the client (thread 9), payload = request id 7.
  AddRange(t, "request", 0, 1000, 9, 7);
  // The worker's forward with the same payload; a layer (payload 1: its index) and an op.
  AddRange(t, "forward", 300, 900, 2, 7);
  AddRange(t, "decoder_layer.1", 350, 850, 2, 1);
  AddRange(t, "demo::mlp_down_linear", 400, 800, 2);
  // Decoys: payload 7 outside the request, payload 8 inside it, a nested payload-7 range.
  AddRange(t, "forward", 1200, 1300, 3, 7);
  AddRange(t, "forward", 320, 340, 4, 8);
  AddRange(t, "demo::gelu", 360, 370, 2, 7);
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_TRUE(b.requests[0].joined);
  const std::map<std::string, int64_t> want = {
      {"queue other ", 300},                                  // [0,300)
      {"host_gap other forward", 50 + 50},                    // [300,350) and [850,900)
      {"host_gap other decoder_layer.1", 50 - 10 + 50},       // its own code
      {"host_operator other decoder_layer.1", 10},            // demo::gelu (no rule: other)
      {"host_operator matmul decoder_layer.1", 400},          // [400,800)
      {"host_gap other ", 100},                               // [900,1000): after service
  };
  EXPECT_EQ(Parts(b, 0), want);
}

TEST(RequestBreakdown, APayloadNothingServesIsItsOwnService) {
  Trace t;
  AddRange(t, "request", 0, 100, 9, 42);
  AddRange(t, "demo::softmax", 10, 30, 9);
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_FALSE(b.requests[0].joined);
  const std::map<std::string, int64_t> want = {{"host_gap other ", 80},
                                               {"host_operator softmax ", 20}};
  EXPECT_EQ(Parts(b, 0), want);
}

TEST(RequestBreakdown, AnArrivalMarkStartsTheRequestInTheQueue) {
  Trace t;
  AddRange(t, "arrival", 100, 100, 9, 7);  // the mark, on the client thread
  AddRange(t, "arrival", 50, 50, 9, 8);    // another request's
  AddRange(t, "request", 400, 1000, 2, 7);  // its service, on a worker
  AddRange(t, "demo::mlp_down_linear", 500, 900, 2);
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_TRUE(b.requests[0].arrival_marked);
  EXPECT_EQ(b.requests[0].start_ns, 100);
  EXPECT_EQ(b.requests[0].dur_ns, 600);
  EXPECT_EQ(b.requests[0].extent_ns, 900);
  const std::map<std::string, int64_t> want = {{"queue other ", 300},
                                               {"host_gap other ", 200},
                                               {"host_operator matmul ", 400}};
  EXPECT_EQ(Parts(b, 0), want);
}

TEST(RequestBreakdown, OneStepAnnotatedTwiceIsOneRequest) {
  Trace t;
  AddRange(t, "step[DECODE bs=32]", 0, 100, 1, kNone, RangeKind::kUserAnnotation);
  AddRange(t, "execute_32_context_0(sq0sk0)_generation_32(sq32sk100)", 5, 95, 1, kNone,
           RangeKind::kUserAnnotation);
  AddRange(t, "request", 10, 20, 1);  // another key inside: a request of its own
  // Two requests' start/end ranges on one client thread, one inside the other in time:
  // their ids differ, so they stay two.
  AddRange(t, "request", 200, 400, 9, 5);
  AddRange(t, "request", 250, 300, 9, 6);
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 4u);
  EXPECT_EQ(b.requests[0].key, "step:decode");
  EXPECT_EQ(b.requests[0].dur_ns, 100);
  EXPECT_EQ(b.requests[1].key, "request");
}

TEST(RequestBreakdown, GraphLaunchCopiesOnTheReplayThreadBelongToTheStep) {
  Trace t;
  AddRange(t, "step[DECODE bs=8]", 0, 100, 5, kNone, RangeKind::kUserAnnotation);
  // What a capture merge writes: a copied launch on ReplayThread(5) inside the graph launch.
  AddLaunch(t, "Cijk_Ailk_Bljk_gemm", 40, 50, 80, ReplayThread(5));
  const RequestBreakdowns b = Breakdown(t);
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_EQ(b.requests[0].gpu_events, 1);
  EXPECT_EQ(Parts(b, 0)["gpu matmul "], 30);
}

TEST(RequestBreakdown, PartsGiveTheWholeTracesBreakdown) {
  Trace whole;
  for (int i = 0; i < 40; ++i) {
    const int64_t base = i * 1000;
    AddRange(whole, "request", base, base + 900, 9, i);
    AddRange(whole, "forward", base + 100 + i, base + 800, 2, i);
    AddRange(whole, "aten::mm", base + 200, base + 300, 2, kNone, RangeKind::kCpuOp);
    AddLaunch(whole, "sgemm", base + 210, base + 400, base + 950, 2);  // past the range's end
  }
  const RequestBreakdowns expected = Breakdown(whole);
  RequestBreakdownAccumulator acc;
  int parts = 0;
  ForEachTracePart(whole, 16, [&](const Trace& part, const PartRanges& ranges) {
    acc.Add(part, MapGpuEvents(part), &ranges);
    ++parts;
  });
  EXPECT_GT(parts, 5);
  const RequestBreakdowns got = acc.Finish([](std::string_view op) {
    return ClassifyOperatorName(op).value_or(LayerType::kOther);
  });
  ASSERT_EQ(got.requests.size(), expected.requests.size());
  for (size_t i = 0; i < got.requests.size(); ++i) {
    EXPECT_EQ(got.requests[i].extent_ns, expected.requests[i].extent_ns) << i;
    EXPECT_EQ(Parts(got, i), Parts(expected, i)) << i;
  }
  EXPECT_EQ(expected.requests[3].extent_ns, 950);
}

TEST(TailExplanation, ExcessOfTheSlowComponentSumsToTheGap) {
  RequestBreakdowns b;
  b.components = {{RequestComponentKind::kHostOperator, LayerType::kMatmul, "decoder_layer.1"},
                  {RequestComponentKind::kHostOperator, LayerType::kMatmul, "decoder_layer.0"},
                  {RequestComponentKind::kQueue, LayerType::kOther, ""}};
  for (int i = 0; i < 100; ++i) {
    RequestRecord r;
    r.key = "request";
    r.name = "request";
    r.start_ns = i * 10'000;
    r.payload = i;
    const int64_t layer1 = (i + 1) % 50 == 0 ? 7000 : 1000;
    const int64_t queue = 10 + i % 7;  // a little noise, the same in tail and band
    r.parts = {{0, layer1}, {1, 1000}, {2, queue}};
    r.dur_ns = r.extent_ns = layer1 + 1000 + queue;
    b.requests.push_back(r);
  }
  const RequestTailSummary s = ExplainTails(b);
  EXPECT_EQ(s.max_sum_error_ns, 0);
  ASSERT_EQ(s.explanations.size(), 2u);
  const TailExplanation& p99 = s.explanations[0];
  EXPECT_EQ(p99.quantile, 0.99);
  EXPECT_EQ(p99.tail_requests, 1);  // p99 of 100 lies between the two slow ones
  ASSERT_FALSE(p99.by_module.empty());
  EXPECT_EQ(p99.by_module[0].label, "decoder_layer.1");
  EXPECT_DOUBLE_EQ(p99.by_module[0].excess_ns, 6000);
  double sum = 0;
  for (const ComponentExcess& c : p99.by_module) sum += c.excess_ns;
  EXPECT_NEAR(sum, p99.gap_ns, 1e-6);
  EXPECT_EQ(p99.by_layer_type[0].label, "matmul");
  EXPECT_EQ(p99.exemplars[0].payload, 99);
  EXPECT_NE(p99.sentence.find("host time in operators in `decoder_layer.1`"), std::string::npos)
      << p99.sentence;
  ASSERT_EQ(s.compositions.size(), 1u);
  EXPECT_EQ(s.compositions[0].requests, 100);
}

TEST(TailExplanation, TooFewRequestsSayWhy) {
  RequestBreakdowns b;
  b.components = {{RequestComponentKind::kGpu, LayerType::kMatmul, ""}};
  RequestRecord r;
  r.key = "step:decode";
  r.parts = {{0, 5}};
  r.dur_ns = r.extent_ns = 5;
  b.requests.push_back(r);
  const RequestTailSummary s = ExplainTails(b);
  ASSERT_EQ(s.explanations.size(), 2u);
  EXPECT_EQ(s.explanations[0].unavailable,
            "1 request of step:decode, fewer than the 20 a tail needs");
  EXPECT_EQ(ExplainTails(RequestBreakdowns{}).unavailable,
            "no request ranges (request, iteration, ProfilerStep#N or a serving step)");
}


TEST(TailBuckets, LabelsRoundTripAndHostileOnesAreRefused) {
  for (RequestComponent c : {RequestComponent{RequestComponentKind::kGpu, LayerType::kMatmul, "m"},
                             RequestComponent{RequestComponentKind::kQueue, LayerType::kOther, ""},
                             RequestComponent{RequestComponentKind::kHostOperator,
                                              LayerType::kAttention, "decoder_layer.1"}}) {
    const std::optional<RequestComponent> back = ParseComponentLabel(ComponentLabel(c), c.module);
    ASSERT_TRUE(back.has_value()) << ComponentLabel(c);
    EXPECT_EQ(back->kind, c.kind);
    EXPECT_EQ(back->layer_type, c.layer_type);
    EXPECT_EQ(back->module, c.module);
  }
  EXPECT_EQ(ComponentLabel({RequestComponentKind::kGpu, LayerType::kMatmul, ""}), "gpu:matmul");
  for (const char* bad : {"extent", "gpu", "queue:matmul", "gpu:nonsense", "", ":", "host_gap:"}) {
    EXPECT_FALSE(ParseComponentLabel(bad, "").has_value()) << bad;
  }
}

TEST(TailBuckets, BucketsHoldTheirExtentsWithinAlpha) {
  for (int64_t ns : std::vector<int64_t>{1, 2, 999, 1000000, 123456789, int64_t{1} << 52}) {
    const double v = TailBucketValue(TailBucket(ns));
    EXPECT_LE(std::abs(v - double(ns)), kTailBucketAlpha * double(ns) * 1.0000001) << ns;
  }
  EXPECT_EQ(TailBucket(0), 0);
  EXPECT_LT(TailBucket(1000), TailBucket(1200));
}

// The rows of 100 requests (two slowed in one module), merged as a collector merges them,
// explain the tail as the requests themselves do.
TEST(TailBuckets, RowsExplainTheTailAsTheRequestsDo) {
  RequestBreakdowns b;
  b.components = {{RequestComponentKind::kHostOperator, LayerType::kMatmul, "decoder_layer.1"},
                  {RequestComponentKind::kHostOperator, LayerType::kMatmul, "decoder_layer.0"}};
  for (int i = 0; i < 100; ++i) {
    RequestRecord r;
    r.key = "request";
    r.payload = i;
    r.start_ns = i * 10000;
    const int64_t slow = (i + 1) % 50 == 0 ? 6'000'000 : 0;
    r.parts = {{0, 1'000'000 + slow + i * 1000}, {1, 1'000'000}};
    r.dur_ns = r.extent_ns = r.parts[0].second + r.parts[1].second;
    b.requests.push_back(r);
  }
  std::vector<RollupRow> rows;
  AddTailBucketRows(b, &rows);
  std::map<int32_t, TailBucketRow> buckets;
  std::vector<int64_t> exemplar_ids;
  for (const RollupRow& row : rows) {
    if (row.subject == RollupSubject::kRequestExemplar) {  // the slowest, slowest first
      exemplar_ids.push_back(std::stoll(row.module));
      continue;
    }
    EXPECT_EQ(row.subject, RollupSubject::kRequestComponent);
    EXPECT_EQ(row.operator_name, "request");
    TailBucketRow& t = buckets[std::stoi(row.kernel_name)];
    t.bucket = std::stoi(row.kernel_name);
    if (row.layer_type == kExtentLabel) {
      t.requests += row.count;
      t.extent_sum_ns += double(row.sum_ns);
    } else {
      std::optional<RequestComponent> c = ParseComponentLabel(row.layer_type, row.module);
      ASSERT_TRUE(c.has_value()) << row.layer_type;
      t.components.emplace_back(*c, double(row.sum_ns));
    }
  }
  EXPECT_LT(buckets.size(), 10u) << "rows grow with buckets, not requests";
  ASSERT_EQ(exemplar_ids.size(), kExemplarsPerWindow);
  EXPECT_EQ(exemplar_ids[0], 99);  // the two slowed ones first (i = 99 then 49)
  EXPECT_EQ(exemplar_ids[1], 49);
  std::vector<TailBucketRow> list;
  for (auto& [i, t] : buckets) list.push_back(t);
  const TailExplanation t = ExplainTailFromBuckets("request", list, 0.99);
  EXPECT_EQ(t.requests, 100);
  EXPECT_EQ(t.tail_requests, 2);  // both slowed requests share the top bucket
  ASSERT_FALSE(t.by_module.empty());
  EXPECT_EQ(t.by_module[0].label, "decoder_layer.1");
  // 6 ms injected; the tail's and the band's own spread (i·1 µs) move it by tens of µs.
  EXPECT_NEAR(t.by_module[0].excess_ns, 6'000'000, 60'000);
  EXPECT_NEAR(t.by_module[0].share, 1.0, 0.01);
  EXPECT_EQ(ExplainTailFromBuckets("request", {list.front()}, 0.99).unavailable.empty(),
            list.front().requests >= kMinTailRequests);
}
}  // namespace
}  // namespace opmap::analysis
