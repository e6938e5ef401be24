#include "analysis/summary/host_ranges.h"

#include <cmath>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

void Add(Trace& t, const char* name, int64_t start, int64_t end, int64_t thread,
         int64_t flops = kNone) {
  Range r;
  r.start_ns = start;
  r.dur_ns = end - start;
  r.name = t.strings.Intern(name);
  r.kind = RangeKind::kNvtx;
  r.process = 1;
  r.thread = thread;
  r.flops = flops;
  t.ranges.push_back(r);
}

TEST(HostRanges, SelfTimeSubtractsDirectChildrenOnly) {
  Trace t;
  Add(t, "decoder_layer.0", 0, 100, 7);
  Add(t, "demo::qkv_linear", 10, 30, 7, 1000);
  Add(t, "demo::softmax", 40, 70, 7);
  Add(t, "demo::gelu", 50, 60, 7);       // inside softmax (test nesting two deep)
  Add(t, "demo::qkv_linear", 0, 10, 8, 500);  // another thread
  Add(t, "request", 95, 120, 7);        // overlaps the layer's end: nobody's child
  HostRangeSummary s = SummarizeHostRanges(t);
  EXPECT_EQ(s.range_count, 6);
  EXPECT_EQ(s.thread_count, 2);
  EXPECT_EQ(s.self_ns, 100 + 10 + 25);
  auto find = [&](std::string_view name) -> const HostRangeStats& {
    for (const HostRangeStats& r : s.ranges) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << name;
    return s.ranges[0];
  };
  EXPECT_EQ(find("decoder_layer.0").self_ns, 50);
  EXPECT_EQ(find("decoder_layer.0").layer_type, LayerType::kOther);
  EXPECT_EQ(find("demo::softmax").self_ns, 20);
  EXPECT_EQ(find("demo::softmax").layer_type, LayerType::kSoftmax);
  EXPECT_EQ(find("demo::gelu").self_ns, 10);
  const HostRangeStats& qkv = find("demo::qkv_linear");
  EXPECT_EQ(qkv.count, 2);
  EXPECT_EQ(qkv.total_ns, 30);
  EXPECT_EQ(qkv.self_ns, 30);
  EXPECT_EQ(qkv.flops, 1500);
  EXPECT_EQ(qkv.bytes, kNone);
  EXPECT_EQ(qkv.layer_type, LayerType::kMatmul);
  EXPECT_DOUBLE_EQ(qkv.duration_ns.p50, 15);  // {10, 20}, linear interpolation
  EXPECT_DOUBLE_EQ(qkv.self_share, 30.0 / 135);
  EXPECT_EQ(find("request").self_ns, 25);
  // Sorted by self time; layer types add up to the whole.
  EXPECT_EQ(s.ranges[0].name, "decoder_layer.0");
  double share = 0;
  for (const HostLayerTypeStats& lt : s.layer_types) share += lt.self_share;
  EXPECT_NEAR(share, 1.0, 1e-12);
  EXPECT_EQ(s.layer_types[0].layer_type, LayerType::kOther);  // layer + request + gelu
  EXPECT_EQ(s.layer_types[0].self_ns, 50 + 25 + 10);
}

TEST(HostRanges, EmptyTrace) {
  Trace t;
  HostRangeSummary s = SummarizeHostRanges(t);
  EXPECT_EQ(s.range_count, 0);
  EXPECT_TRUE(s.ranges.empty());
}

}  // namespace
}  // namespace opmap::analysis
