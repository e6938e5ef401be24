#include "analysis/summary/host_ranges.h"

#include <cmath>
#include <vector>

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

// Ranges listed out of order, on threads of two processes: the sweep order is by
// (process, thread), then start, longer first on ties, then index; parents follow it.
TEST(HostRanges, ParentsAndSweepOrderWhateverTheListOrder) {
  Trace t;
  Add(t, "inner", 20, 30, 9);   // 0: thread 9, inside 2
  Add(t, "tie-short", 0, 5, 7);  // 1: thread 7, same start as 3, shorter: after it, inside it
  Add(t, "outer", 10, 50, 9);   // 2: thread 9
  Add(t, "tie-long", 0, 40, 7);  // 3: thread 7
  Add(t, "alone", 0, 5, 8);      // 4: thread 8
  Add(t, "same", 0, 5, 7);       // 5: thread 7, equal to 1: after it (index), inside 3 and 1
  t.ranges[4].process = 0;       // an earlier process comes first whatever its thread
  int64_t threads = 0;
  std::vector<uint32_t> order;
  const std::vector<int32_t> parent = RangeParents(t, &threads, &order);
  EXPECT_EQ(threads, 3);
  EXPECT_EQ(order, (std::vector<uint32_t>{4, 3, 1, 5, 2, 0}));
  EXPECT_EQ(parent, (std::vector<int32_t>{2, 3, -1, -1, -1, 1}));
}

TEST(HostRanges, EmptyTrace) {
  Trace t;
  HostRangeSummary s = SummarizeHostRanges(t);
  EXPECT_EQ(s.range_count, 0);
  EXPECT_TRUE(s.ranges.empty());
}

}  // namespace
}  // namespace opmap::analysis
