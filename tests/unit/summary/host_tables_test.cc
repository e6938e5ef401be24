// Host tables (summary/host_tables.h) on a CPU-only trace built here: operators by name and
// Input Dims, module types from opmap_torch's "path (Class)" names, steps left out.
#include "analysis/summary/host_tables.h"

#include <string>

#include "gtest/gtest.h"

namespace opmap::analysis::host_tables_test {
namespace {

void Add(Trace& t, const std::string& name, int64_t start, int64_t end,
         const std::string& dims = "") {
  Range r;
  r.name = t.strings.Intern(name);
  r.kind = RangeKind::kNvtx;
  r.start_ns = start;
  r.dur_ns = end - start;
  r.process = 1;
  r.thread = 1;
  if (!dims.empty()) r.input_dims = t.strings.Intern(dims);
  t.ranges.push_back(r);
}

TEST(HostTables, OperatorsByShapeAndModulesByClassWithoutGpuEvents) {
  Trace t;
  Add(t, "step[DECODE bs=2]", 0, 1000);  // a step: neither operator nor module
  for (int layer = 0; layer < 2; ++layer) {
    const int64_t at = 100 + 400 * layer;
    Add(t, "layers." + std::to_string(layer) + ".mlp (LlamaMLP)", at, at + 300);
    Add(t, "aten::linear", at + 10, at + 110, "[[2, 64], [128, 64], []]");
    Add(t, "aten::linear", at + 120, at + 170, "[[2, 128], [64, 128], []]");
    Add(t, "aten::silu", at + 180, at + 190, "[[2, 128]]");
  }
  const HostTables h = SummarizeHostTables(t);
  ASSERT_EQ(h.operators.size(), 3u);
  EXPECT_EQ(h.operators[0].name, "aten::linear");
  EXPECT_EQ(h.operators[0].input_dims, "[[2, 64], [128, 64], []]");
  EXPECT_EQ(h.operators[0].count, 2);
  EXPECT_EQ(h.operators[0].total_ns, 200);
  EXPECT_EQ(h.operators[1].total_ns, 100);
  EXPECT_EQ(h.operators[2].name, "aten::silu");
  ASSERT_EQ(h.module_types.size(), 1u);
  EXPECT_EQ(h.module_types[0].module_type, "LlamaMLP");
  EXPECT_EQ(h.module_types[0].modules, 2);
  EXPECT_EQ(h.module_types[0].count, 2);
  EXPECT_EQ(h.module_types[0].total_ns, 600);
}

}  // namespace
}  // namespace opmap::analysis::host_tables_test
