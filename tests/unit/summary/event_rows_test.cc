// BuildEventRows on real traces: one row per GPU event, range and launch call, in that
// order, and attributed as BuildRollup attributes: per (layer type, kernel, module) the
// GPU rows' count and summed duration equal the rollup's kKernel rows exactly, per
// operator the GPU rows' time equals its kOperatorGpu rows' time; a request range's own
// row carries its own request number.
#include "analysis/summary/event_rows.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/rollup.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

const char* const kTraces[] = {
    "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz",
    "traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "traces/kineto_resnet50_v100_2021.json.gz",
};

class EventRowsOnTraces : public ::testing::TestWithParam<const char*> {};

TEST_P(EventRowsOnTraces, RowsAreTheEventsWithTheRollupsAttribution) {
  OPMAP_REQUIRE_SHARED(GetParam());
  absl::StatusOr<Trace> imported = ImportKinetoBytes(
      ::opmap::testing::ReadFileOrDie(::opmap::testing::SharedPath(GetParam())));
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Trace& trace = *imported;
  const MappingResult mapping = MapGpuEvents(trace);
  const SessionRollup rollup = BuildRollup(trace, mapping);
  const EventRows built = BuildEventRows(trace, mapping);
  const std::vector<EventRow>& rows = built.rows;

  const size_t gpu = trace.gpu_events.size(), ranges = trace.ranges.size();
  ASSERT_EQ(rows.size(), gpu + ranges + trace.api_calls.size());
  ASSERT_GT(gpu, 0u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const EventRowKind want =
        i < gpu ? static_cast<EventRowKind>(trace.gpu_events[i].kind)
                : (i < gpu + ranges ? EventRowKind::kRange : EventRowKind::kLaunch);
    ASSERT_EQ(rows[i].kind, want) << "row " << i;
  }
  for (size_t i = 0; i < gpu; ++i) {
    EXPECT_EQ(rows[i].start_ns, trace.gpu_events[i].start_ns);
    EXPECT_EQ(rows[i].dur_ns, trace.gpu_events[i].dur_ns);
    EXPECT_EQ(rows[i].correlation, trace.gpu_events[i].correlation);
  }

  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::pair<int64_t, int64_t>> from_rows, from_rollup;
  std::map<std::string, int64_t> op_rows, op_rollup;
  for (size_t i = 0; i < gpu; ++i) {
    const EventRow& r = rows[i];
    auto& [count, sum] =
        from_rows[{std::string(r.layer_type), std::string(r.name), std::string(r.module)}];
    ++count;
    sum += r.dur_ns;
    if (!r.operator_name.empty()) op_rows[std::string(r.operator_name)] += r.dur_ns;
  }
  for (const RollupRow& row : rollup.rows) {
    if (row.subject == RollupSubject::kKernel) {
      auto& [count, sum] = from_rollup[{row.layer_type, row.kernel_name, row.module}];
      count += row.count;
      sum += row.sum_ns;
    } else if (row.subject == RollupSubject::kOperatorGpu) {
      op_rollup[row.operator_name] += row.sum_ns;
    }
  }
  EXPECT_EQ(from_rows, from_rollup);
  // Operators whose kernels took no time have no kOperatorGpu row worth comparing.
  for (auto it = op_rollup.begin(); it != op_rollup.end();) {
    it = it->second == 0 ? op_rollup.erase(it) : std::next(it);
  }
  for (auto it = op_rows.begin(); it != op_rows.end();) {
    it = it->second == 0 ? op_rows.erase(it) : std::next(it);
  }
  EXPECT_EQ(op_rows, op_rollup);

  // Request ranges: numbered 1.. in start order, each its own row's request.
  std::vector<std::pair<int64_t, uint32_t>> requests;
  for (size_t r = 0; r < ranges; ++r) {
    const EventRow& row = rows[gpu + r];
    if (!RequestKey(row.name).empty()) requests.emplace_back(row.start_ns, row.request);
  }
  std::sort(requests.begin(), requests.end());
  std::set<uint32_t> numbers;
  for (size_t k = 0; k < requests.size(); ++k) numbers.insert(requests[k].second);
  EXPECT_EQ(numbers.size(), requests.size());
  if (!requests.empty()) {
    EXPECT_EQ(*numbers.begin(), 1u);
    EXPECT_EQ(*numbers.rbegin(), requests.size());
  }
  // A launch call's row names the operator of the first GPU event it launched.
  std::map<int32_t, size_t> first_launched;
  for (size_t i = 0; i < gpu; ++i) {
    if (mapping.events[i].launch_api >= 0) first_launched.try_emplace(mapping.events[i].launch_api, i);
  }
  ASSERT_FALSE(first_launched.empty());
  for (const auto& [call, i] : first_launched) {
    const EventRow& launch = rows[gpu + ranges + static_cast<size_t>(call)];
    EXPECT_EQ(launch.operator_name, rows[i].operator_name) << "call " << call;
    EXPECT_EQ(launch.layer_type, rows[i].layer_type) << "call " << call;
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, EventRowsOnTraces, ::testing::ValuesIn(kTraces));

}  // namespace
}  // namespace opmap::analysis
