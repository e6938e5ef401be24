// `opmap analyze REPLAY --capture PATH` as a user runs it: the merge on a real serving
// trace, and each way a capture argument can be wrong (exit 2, the file and field named).
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/nsys_graph_export.h"
#include "tests/testing/run_process.h"
#include "tests/testing/shared_data.h"

namespace opmap::capture_cli_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kReplay[] = "traces/inference/vllm_decode_full/graph_execution.json.gz";
constexpr char kCaptures[] = "traces/inference/vllm_decode_full/capture_traces";

testing::ProcessResult Analyze(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"analyze"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(OPMAP_BIN_DIR "/opmap", argv);
}

class CaptureCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OPMAP_REQUIRE_SHARED(kReplay);
    replay_ = testing::SharedPath(kReplay);
    captures_ = testing::SharedPath(kCaptures);
    dir_ = fs::temp_directory_path() / ("opmap-capture-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A capture folder holding `index` as its execution_details.json.
  std::string FolderWithIndex(const std::string& index) {
    fs::path folder = dir_ / "captures";
    fs::create_directories(folder);
    std::ofstream(folder / "execution_details.json") << index;
    return folder.string();
  }

  std::string replay_, captures_;
  fs::path dir_;
};

TEST_F(CaptureCliTest, MergesAndSaysWhatMatched) {
  testing::ProcessResult r = Analyze({replay_, "--capture", captures_, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("opmap analyze: graph capture merge: 1 of 1 graph launches "
                               "matched (421 of 421 kernels, 100.0% of their GPU time) against "
                               "1 captured graphs in 1 files"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.out);
  EXPECT_EQ(int64_t(doc["mapping"]["by_rule"]["graph_node"]), 421);
  EXPECT_EQ(int64_t(doc["source_counters"]["graph_merge.matched_events"]), 421);
  std::string_view gpu = doc["gpus"].at(0);
  EXPECT_THAT(std::string(gpu), HasSubstr("AMD Instinct MI300X (identified from deviceProperties"));
  // The capture file itself works as well as its folder.
  testing::ProcessResult file = Analyze(
      {replay_, "--capture",
       captures_ + "/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz", "--quiet"});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.err, "");
}

TEST_F(CaptureCliTest, BadCaptureArgumentsExitTwoNamingTheCulprit) {
  testing::ProcessResult missing = Analyze({replay_, "--capture", (dir_ / "nope").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr((dir_ / "nope").string()));

  testing::ProcessResult escape =
      Analyze({replay_, "--capture", FolderWithIndex(R"([{"file": "../x.json", "batch_size": 1}])")});
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_THAT(escape.err, HasSubstr("execution_details.json: entry [0]: field \"file\" must name one file"));

  testing::ProcessResult absent = Analyze(
      {replay_, "--capture", FolderWithIndex(R"([{"file": "bs_1.json", "batch_size": 1}])")});
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_THAT(absent.err, HasSubstr("bs_1.json"));

  fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  testing::ProcessResult none = Analyze({replay_, "--capture", empty.string()});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("no capture trace in the folder"));

  testing::ProcessResult two = Analyze({replay_, replay_, "--capture", captures_});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_THAT(two.err, HasSubstr("--capture merges into one replay trace"));
}

// Another engine's capture matches nothing: the reason is printed and counted, and the
// replay is still analyzed (its kernels typed by their names).
TEST_F(CaptureCliTest, AForeignCaptureIsCountedWithTheReason) {
  OPMAP_REQUIRE_SHARED("traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz");
  testing::ProcessResult r =
      Analyze({replay_, "--capture", testing::SharedPath("traces/inference/sglang_decode/capture_traces"),
               "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("0 of 1 graph launches matched (0 of 421 kernels"));
  EXPECT_THAT(r.err, HasSubstr("1 launches (421 kernels) unmatched: sequence differs at kernel 1 "
                               "of 421: replay `triton_poi_fused_0`"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.out);
  EXPECT_EQ(int64_t(doc["mapping"]["by_rule"]["graph_node"]), 0);
  EXPECT_EQ(int64_t(doc["mapping"]["layer_type_source"]["kernel_name"]), 421);
  EXPECT_EQ(int64_t(doc["source_counters"]["graph_merge.matched_launches"]), 0);
}

// An Nsight export taken with --cuda-graph-trace=node needs no --capture: its replayed
// kernels are matched to the capture it holds by node id, said on stderr, and the export
// is read whole (a streamed read would leave them unmapped).
TEST(NsysNodeIdCli, AnalyzeMergesByNodeIdAndSaysSo) {
  const fs::path path =
      fs::temp_directory_path() / ("opmap-node-cli-" + std::to_string(::getpid()) + ".sqlite");
  testing::WriteNsysGraphExport(path.string(), {.foreign_replay = true});
  testing::ProcessResult r = Analyze({path.string(), "--format", "json"});
  fs::remove(path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("opmap analyze: graph capture merge: 2 of 3 graph launches matched "
                               "(4 of 5 kernels, 78.9% of their GPU time) against 1 graphs "
                               "captured in the export, by graph node id"));
  EXPECT_THAT(r.err, HasSubstr("1 launches (1 kernels) unmatched: a node with no creation event"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.out);
  EXPECT_EQ(int64_t(doc["mapping"]["by_rule"]["graph_node"]), 4);
  EXPECT_EQ(int64_t(doc["source_counters"]["graph_merge.matched_events"]), 4);
  EXPECT_EQ(doc["streaming"].error(), simdjson::NO_SUCH_FIELD) << "read whole, not streamed";
}

}  // namespace
}  // namespace opmap::capture_cli_test
