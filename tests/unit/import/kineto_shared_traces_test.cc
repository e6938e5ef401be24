// The importer on every real trace in ../shared/traces: counts against MANIFEST.csv and
// exact ns for the trace whose ts carry ns fractions. Skips when ../shared is absent.
#include <algorithm>
#include <set>
#include <string>

#include "analysis/import/kineto_importer.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::ReadCsv;
using ::opmap::testing::ReadFileOrDie;
using ::opmap::testing::SharedPath;

std::set<int64_t> IntSet(const std::string& s) {
  std::set<int64_t> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string::npos) end = s.size();
    if (end > pos) out.insert(std::stoll(s.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

TEST(KinetoSharedTracesTest, CountsMatchManifest) {
  OPMAP_REQUIRE_SHARED("traces/MANIFEST.csv");
  auto rows = ReadCsv(SharedPath("traces/MANIFEST.csv"));
  ASSERT_GE(rows.size(), 14u);
  for (const auto& row : rows) {
    const std::string& file = row.at("file");
    SCOPED_TRACE(file);
    absl::StatusOr<Trace> t = ImportKinetoBytes(ReadFileOrDie(SharedPath("traces/" + file)));
    ASSERT_TRUE(t.ok()) << t.status();
    const int64_t kernels =
        std::count_if(t->gpu_events.begin(), t->gpu_events.end(),
                      [](const GpuEvent& g) { return g.kind == GpuEventKind::kKernel; });
    EXPECT_EQ(kernels, std::stoll(row.at("n_kernels")));
    EXPECT_EQ(static_cast<int64_t>(t->gpu_events.size()), std::stoll(row.at("n_gpu_events")));
    EXPECT_EQ(t->info.format, "kineto-json");
    // Every device and stream is named, and no duration is negative.
    std::set<int64_t> streams, devices;
    for (const GpuEvent& g : t->gpu_events) {
      EXPECT_GE(g.dur_ns, 0);
      EXPECT_NE(g.stream, kNone);
      streams.insert(g.stream);
      devices.insert(g.device);
    }
    // MANIFEST "streams" and "devices" are space-separated lists.
    EXPECT_EQ(streams, IntSet(row.at("streams")));
    EXPECT_EQ(devices, IntSet(row.at("devices")));
    // Every GPU event with a launch in MANIFEST has a correlation id.
    const std::string& with = row.at("gpu_ev_with_launch_corr");
    const int64_t n_with = std::stoll(with.substr(0, with.find('/')));
    const int64_t n_corr = std::count_if(
        t->gpu_events.begin(), t->gpu_events.end(),
        [](const GpuEvent& g) { return g.correlation != kNone; });
    EXPECT_GE(n_corr, n_with);
    const std::string& gpu = row.at("gpu");
    if (!gpu.empty()) {
      ASSERT_FALSE(t->info.gpu_names.empty());
      EXPECT_EQ(gpu.rfind(t->info.gpu_names.front(), 0), 0u)
          << "MANIFEST gpu '" << gpu << "' vs " << t->info.gpu_names.front();
    }
  }
}

TEST(KinetoSharedTracesTest, NsFractionsAreExact) {
  OPMAP_REQUIRE_SHARED("traces/hta_ns_resolution_v100_rank0.json.gz");
  absl::StatusOr<Trace> t = ImportKinetoBytes(
      ReadFileOrDie(SharedPath("traces/hta_ns_resolution_v100_rank0.json.gz")));
  ASSERT_TRUE(t.ok()) << t.status();
  auto first_of = [&](GpuEventKind kind) -> const GpuEvent& {
    return *std::find_if(t->gpu_events.begin(), t->gpu_events.end(),
                         [&](const GpuEvent& g) { return g.kind == kind; });
  };
  // The text (zcat | grep -m1 '"cat": "kernel"'):
  //   "ts": 1712195495505582.988, "dur": 4.928, ... "correlation": 135071
  const GpuEvent& k = first_of(GpuEventKind::kKernel);
  EXPECT_EQ(k.start_ns, int64_t{1712195495505582988});
  EXPECT_EQ(k.dur_ns, 4928);
  EXPECT_EQ(k.correlation, 135071);
  EXPECT_EQ(k.external_id, 112);
  EXPECT_EQ(t->strings.Get(k.name).rfind(
                "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<", 0),
            0u);
  // A double can't carry that: the nearest one is ...583.0 µs.
  EXPECT_NE(static_cast<int64_t>(1712195495505582.988 * 1000.0), k.start_ns);
  //   "ts": 1712195495506161.288, "dur": 1.280  (first gpu_memcpy)
  const GpuEvent& m = first_of(GpuEventKind::kMemcpy);
  EXPECT_EQ(m.start_ns, int64_t{1712195495506161288});
  EXPECT_EQ(m.dur_ns, 1280);
  EXPECT_EQ(m.bytes, 256);
  // Its launch: "cudaLaunchKernel" ... "ts": 1712195495505543.140, "dur": 41.768
  auto api = std::find_if(t->api_calls.begin(), t->api_calls.end(),
                          [](const ApiCall& a) { return a.correlation == 135071; });
  ASSERT_NE(api, t->api_calls.end());
  EXPECT_EQ(api->start_ns, int64_t{1712195495505543140});
  EXPECT_EQ(api->dur_ns, 41768);
  EXPECT_EQ(t->strings.Get(api->name), "cudaLaunchKernel");
}

TEST(KinetoSharedTracesTest, Format2021) {
  OPMAP_REQUIRE_SHARED("traces/kineto_resnet50_v100_2021.json.gz");
  absl::StatusOr<Trace> t = ImportKinetoBytes(
      ReadFileOrDie(SharedPath("traces/kineto_resnet50_v100_2021.json.gz")));
  ASSERT_TRUE(t.ok()) << t.status();
  // {"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 25738, "tid": "25738",
  //  "ts": 1623142623460111, "dur": 25, ...} is the first event.
  ASSERT_FALSE(t->ranges.empty());
  EXPECT_EQ(t->strings.Get(t->ranges[0].name), "aten::empty");
  EXPECT_EQ(t->ranges[0].thread, 25738);
  EXPECT_EQ(t->ranges[0].start_ns, int64_t{1623142623460111000});
  EXPECT_EQ(t->ranges[0].external_id, 2);
  for (const GpuEvent& g : t->gpu_events) EXPECT_EQ(g.stream, 7);
  // CPU tids are numeric strings ("25738"): parsed as numbers.
  for (const ApiCall& a : t->api_calls) EXPECT_GT(a.thread, 0);
  for (const Range& r : t->ranges) EXPECT_GT(r.thread, 0);
}

TEST(KinetoSharedTracesTest, RocmTrace) {
  OPMAP_REQUIRE_SHARED("traces/hta_mi250_rocm.json.gz");
  absl::StatusOr<Trace> t =
      ImportKinetoBytes(ReadFileOrDie(SharedPath("traces/hta_mi250_rocm.json.gz")));
  ASSERT_TRUE(t.ok()) << t.status();
  std::set<int32_t> devices;
  for (const GpuEvent& g : t->gpu_events) devices.insert(g.device);
  EXPECT_EQ(devices, (std::set<int32_t>{2}));
  bool saw_hip = false;
  for (const ApiCall& a : t->api_calls) saw_hip |= t->strings.Get(a.name).rfind("hip", 0) == 0;
  EXPECT_TRUE(saw_hip);
}

}  // namespace
}  // namespace opmap::analysis
