// The graph capture merge on the real MI300X serving traces in ../shared/traces/inference
// against TraceLens' capture-merged results in ../shared/reference/tracelens_inference:
// GPU time per module type and per operator, the share under a real operator, and the
// kernel-name layer types without the merge. Skips when ../shared is absent.
#include <map>
#include <string>
#include <vector>

#include "analysis/graphs/capture_merge.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/serving/request_key.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/serving_traces.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis::capture_merge_shared_test {
namespace {

using ::opmap::testing::ReadCsv;
using ::opmap::testing::SharedPath;
using ::opmap::testing::ToDouble;

class ServingTraceTest : public ::testing::TestWithParam<::opmap::testing::ServingCase> {
 protected:
  void SetUp() override {
    const ::opmap::testing::ServingCase& c = GetParam();
    if (!::opmap::testing::SharedFileExists("traces/inference/" + c.replay) ||
        !::opmap::testing::SharedFileExists("reference/tracelens_inference/" + c.reference +
                                            "/ops_summary.csv")) {
      GTEST_SKIP() << "shared data not found: " << SharedPath("traces/inference/" + c.replay);
    }
    ::opmap::testing::ServingTraces loaded = ::opmap::testing::LoadServingTraces(c);
    replay_ = std::move(loaded.replay);
    captures_ = std::move(loaded.captures);
    inputs_ = std::move(loaded.inputs);
  }

  // TraceLens' direct kernel time in µs, summed by `column`.
  std::map<std::string, double> Reference(const std::string& sheet, const std::string& column) {
    std::map<std::string, double> out;
    for (const auto& row : ReadCsv(SharedPath("reference/tracelens_inference/" +
                                              GetParam().reference + "/" + sheet))) {
      out[row.at(column)] += ToDouble(row.at("total_direct_kernel_time_ms")) * 1000.0;
    }
    return out;
  }

  Trace replay_;
  std::vector<std::unique_ptr<Trace>> captures_;
  std::vector<CaptureInput> inputs_;
};

TEST_P(ServingTraceTest, MergedModulesAndOperatorsMatchTraceLens) {
  absl::StatusOr<CaptureMergeReport> report = MergeGraphCaptures(replay_, inputs_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->graph_launches, 1);
  EXPECT_EQ(report->matched_launches, 1);
  EXPECT_EQ(report->matched_events, report->graph_events);
  EXPECT_TRUE(report->unmatched.empty());

  MappingResult mapping = MapGpuEvents(replay_);
  TraceSummary s = Summarize(replay_, mapping);
  const double total_us = s.gpu_time_ns / 1000.0;
  EXPECT_EQ(s.by_rule[static_cast<int>(MappingRule::kGraphNode)], report->matched_events);

  // Module types: within 1% of TraceLens' parent_module sums for every module with >= 1%.
  std::map<std::string, double> ref_modules = Reference("ops_summary_by_category.csv", "parent_module");
  std::map<std::string, double> ours;
  for (const ModuleTypeStats& m : s.modules.module_types) ours[m.module_type] = m.gpu_time_ns / 1000.0;
  int checked = 0;
  for (const auto& [module, ref_us] : ref_modules) {
    if (module == "NA" || ref_us < 0.01 * total_us) continue;
    std::string type = module.substr(module.find(": ") + 2);
    SCOPED_TRACE(type);
    ASSERT_TRUE(ours.contains(type));
    EXPECT_NEAR(ours[type], ref_us, 0.01 * ref_us);
    ++checked;
  }
  EXPECT_GE(checked, 2);

  // Operators: within 2% of ops_summary.csv for every operator with >= 1%.
  std::map<std::string, double> ref_ops = Reference("ops_summary.csv", "name");
  std::map<std::string, double> our_ops;
  double under_operator_us = 0;
  for (const OperatorStats& op : s.operators) {
    our_ops[op.name] = op.gpu_time_ns / 1000.0;
    EXPECT_TRUE(RequestKey(op.name).empty()) << op.name << " is a step, not an operator";
    under_operator_us += op.gpu_time_ns / 1000.0;
  }
  checked = 0;
  for (const auto& [name, ref_us] : ref_ops) {
    if (ref_us < 0.01 * total_us) continue;
    SCOPED_TRACE(name);
    ASSERT_TRUE(our_ops.contains(name));
    EXPECT_NEAR(our_ops[name], ref_us, 0.02 * ref_us);
    ++checked;
  }
  EXPECT_GE(checked, 5);
  EXPECT_GE(under_operator_us, 0.95 * total_us);
}

TEST_P(ServingTraceTest, WithoutCaptureNoKernelTakesItsTypeFromAStep) {
  MappingResult mapping = MapGpuEvents(replay_);
  TraceSummary s = Summarize(replay_, mapping);
  for (const OperatorStats& op : s.operators) {
    EXPECT_TRUE(RequestKey(op.name).empty()) << op.name << " is a step, not an operator";
  }
  // The replayed kernels sit under no operator: their layer types are their names'.
  int64_t by_name_ns = 0;
  for (size_t i = 0; i < replay_.gpu_events.size(); ++i) {
    if (mapping.events[i].range < 0) by_name_ns += replay_.gpu_events[i].dur_ns;
  }
  EXPECT_GE(by_name_ns, 0.95 * s.gpu_time_ns);
  EXPECT_EQ(s.layer_type_source_kernel_name,
            mapping.by_rule[static_cast<int>(MappingRule::kUnmapped)]);
}

INSTANTIATE_TEST_SUITE_P(Inference, ServingTraceTest, ::testing::ValuesIn(::opmap::testing::ServingCases()),
                         [](const auto& info) { return info.param.reference; });

}  // namespace
}  // namespace opmap::analysis::capture_merge_shared_test
