#include "analysis/graphs/execution_details.h"

#include "gtest/gtest.h"

namespace opmap::analysis::execution_details_test {
namespace {

TEST(ExecutionDetailsTest, ReadsTheIndexVllmAndSglangWrite) {
  absl::StatusOr<std::vector<CaptureFileEntry>> e = ParseExecutionDetails(
      R"([{"file": "bs_32_rank0.json.gz", "batch_size": 32, "mode": "FULL", "x": [1]},
          {"file": "graph_capture_rank_0.1.pt.trace.json.gz", "batch_size": 1}])");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].file, "bs_32_rank0.json.gz");
  EXPECT_EQ((*e)[0].batch_size, 32);
  EXPECT_EQ((*e)[0].mode, "FULL");
  EXPECT_EQ((*e)[1].batch_size, 1);
  EXPECT_EQ((*e)[1].mode, "");
}

TEST(ExecutionDetailsTest, RefusesWhatCouldLeaveTheFolderOrIsNotAFigure) {
  struct Bad {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"file": "a"})", "not a JSON array"},
      {R"([{"file": "../etc/passwd", "batch_size": 1}])", "entry [0]: field \"file\" must name one file"},
      {R"([{"file": "/abs.json"}])", "must name one file"},
      {R"([{"file": ".."}])", "must name one file"},
      {R"([{"file": "a.json", "batch_size": 0}])", "entry [0]: field \"batch_size\""},
      {R"([{"file": "a.json", "batch_size": 1.5}])", "field \"batch_size\""},
      {R"([{"file": "a.json", "batch_size": 4294967296}])", "field \"batch_size\""},
      {R"([{"file": "a.json"}, {"batch_size": 2}])", "entry [1]: missing field \"file\""},
      {R"([{"file": 3}])", "field \"file\" is not a string"},
      {R"([7])", "entry [0]: not an object"},
      {R"([{"file": "a.json", "mode": 3}])", "field \"mode\" is not a string"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.json);
    absl::StatusOr<std::vector<CaptureFileEntry>> e = ParseExecutionDetails(b.json);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find(b.message), std::string::npos) << e.status();
  }
}

TEST(ExecutionDetailsTest, BatchSizeFromFileName) {
  EXPECT_EQ(BatchSizeFromFileName("bs_32_rank0.json.gz"), 32);
  EXPECT_EQ(BatchSizeFromFileName("sglang_bs_4.json"), 4);
  EXPECT_EQ(BatchSizeFromFileName("graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"), -1);
  EXPECT_EQ(BatchSizeFromFileName("abs_32_x.json"), -1);
  EXPECT_EQ(BatchSizeFromFileName("bs_12345678901_x.json"), -1);
  EXPECT_EQ(BatchSizeFromFileName("bs_0_x.json"), -1);
}

}  // namespace
}  // namespace opmap::analysis::execution_details_test
