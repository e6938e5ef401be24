// Nsight Systems exports from real H100 runs (../shared/nsys) imported, mapped and
// summarized as `opmap analyze` does, against the independent reference computed from
// the rule "kernel → runtime launch (correlationId, same process) → innermost NVTX range
// on the launching thread" (../shared/nsys/README.md): per operator the instances that
// launched GPU work, their GPU time and exact p50/p95/p99; the mapped / outside-window /
// outside-any-range kernel counts.
#include <map>
#include <string>

#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using opmap::testing::ReadCsv;
using opmap::testing::ReadFileOrDie;
using opmap::testing::SharedPath;
using opmap::testing::ToDouble;

class NsysReference : public ::testing::TestWithParam<std::string> {};

TEST_P(NsysReference, OperatorsAndMappingCountsEqualTheReference) {
  const std::string db = "nsys/" + GetParam() + ".sqlite";
  const std::string ref = "nsys/" + GetParam() + ".reference.csv";
  OPMAP_REQUIRE_SHARED(db);
  OPMAP_REQUIRE_SHARED(ref);
  absl::StatusOr<Trace> trace = ImportNsysSqlite(ReadFileOrDie(SharedPath(db)));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->info.format, "nsys-sqlite");
  // The reference counts kernels only (no memcpy/memset) in operators and mapping.
  int64_t memory_ops = 0;
  std::erase_if(trace->gpu_events, [&](const GpuEvent& e) {
    const bool memory = e.kind != GpuEventKind::kKernel;
    memory_ops += memory;
    return memory;
  });
  EXPECT_GT(memory_ops, 0) << "the exports have memcpy/memset rows: were they imported?";
  const MappingResult mapping = MapGpuEvents(*trace);
  const TraceSummary s = Summarize(*trace, mapping);

  std::map<std::string, const OperatorStats*> ops;
  for (const OperatorStats& o : s.operators) ops[o.name] = &o;
  int compared = 0;
  for (const opmap::testing::CsvRow& row : ReadCsv(SharedPath(ref))) {
    const std::string& name = row.at("operator");
    if (name.starts_with("#")) {
      const int64_t want = static_cast<int64_t>(ToDouble(row.at("instances")));
      if (name == "#kernels") {
        int64_t kernels = 0;
        for (const GpuEvent& e : trace->gpu_events) kernels += e.kind == GpuEventKind::kKernel;
        EXPECT_EQ(kernels, want) << name;
      } else if (name == "#mapped_to_nvtx") {
        EXPECT_EQ(s.by_rule[static_cast<int>(MappingRule::kLaunchNesting)], want) << name;
      } else if (name == "#launch_outside_window") {
        EXPECT_EQ(s.unmapped_by_reason[static_cast<int>(UnmappedReason::kLaunchOutsideWindow)],
                  want) << name;
      } else if (name == "#launch_outside_any_range") {
        EXPECT_EQ(s.unmapped_by_reason[static_cast<int>(UnmappedReason::kLaunchOutsideRanges)],
                  want) << name;
      }
      continue;
    }
    auto it = ops.find(name);
    ASSERT_NE(it, ops.end()) << "operator missing: " << name;
    const OperatorStats& o = *it->second;
    EXPECT_EQ(o.count, static_cast<int64_t>(ToDouble(row.at("instances")))) << name;
    EXPECT_NEAR(o.gpu_time_ns / 1e3, ToDouble(row.at("gpu_time_us")), 1e-3) << name;
    EXPECT_NEAR(o.instance_gpu_time_ns.p50 / 1e3, ToDouble(row.at("p50_us")), 1e-3) << name;
    EXPECT_NEAR(o.instance_gpu_time_ns.p95 / 1e3, ToDouble(row.at("p95_us")), 1e-3) << name;
    EXPECT_NEAR(o.instance_gpu_time_ns.p99 / 1e3, ToDouble(row.at("p99_us")), 1e-3) << name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
  EXPECT_EQ(compared, static_cast<int>(s.operators.size()))
      << "opmap found operators the reference does not list";
}

INSTANTIATE_TEST_SUITE_P(SharedExports, NsysReference,
                         ::testing::Values("h100_2gpu_1s", "mfu_2gpu_before"));

TEST(NsysImport, BadInputIsNamed) {
  EXPECT_NE(ImportNsysSqlite("{\"traceEvents\": []}").status().message().find(
                "not an SQLite database"),
            std::string::npos);
  OPMAP_REQUIRE_SHARED("nsys/h100_2gpu_1s.sqlite");
  std::string bytes = ReadFileOrDie(SharedPath("nsys/h100_2gpu_1s.sqlite"));
  bytes.resize(bytes.size() / 3);
  absl::StatusOr<Trace> cut = ImportNsysSqlite(bytes);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(cut.status().message().empty());
}

}  // namespace
}  // namespace opmap::analysis
