// `opmap analyze` output that a workload's names cannot attack (docs/security.md,
// "Output"): the probe's ESC/OSC sequences, BEL, a line break and a
// bidi override in a trace's operator and kernel names, through the real binary.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/run_process.h"

namespace opmap::analyze_output_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Result = testing::ProcessResult;

Result RunOpmap(const std::vector<std::string>& args) {
  return testing::RunProcess(OPMAP_BIN_DIR "/opmap", args);
}

const char kLaunch[] =
    R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 2, "args": {"correlation": 5}})";

std::string Doc(const std::vector<std::string>& events) {
  std::string s = "{\"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "") + events[i];
  return s + "]}";
}

class AnalyzeOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("opmap-analyze-output-" + std::to_string(::getpid())))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string dir_;
};

// Names the workload chose reach the analyst printable: the probe's
// ESC/OSC sequences, BEL, a line break and a bidi override, in the operator and kernel
// names of a trace, shown escaped in the table, CSV and Markdown outputs.
TEST_F(AnalyzeOutputTest, HostileNamesArePrintedEscaped) {
  const std::string op = R"({"ph": "X", "cat": "cpu_op", "name": "\u001b]0;pwned\u0007aten::mm\nfake row", "pid": 1, "tid": 1, "ts": 1, "dur": 100})";
  const std::string kernel =
      R"({"ph": "X", "cat": "kernel", "name": "\u001b[2J\u001b[31mgemm\u202ecod.exe", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 5}})";
  const std::string path = Write("hostile.json", Doc({op, kLaunch, kernel}));
  auto raw_controls = [](const std::string& out) {
    int n = 0;
    for (unsigned char c : out) n += (c < 0x20 && c != '\n') || c == 0x7f;
    return n + static_cast<int>(out.find("\xe2\x80\xae") != std::string::npos);
  };
  for (const std::vector<std::string>& format :
       {std::vector<std::string>{}, std::vector<std::string>{"--format", "csv"}}) {
    std::vector<std::string> args = {"analyze", path, "--quiet"};
    args.insert(args.end(), format.begin(), format.end());
    Result r = RunOpmap(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(raw_controls(r.out), 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr(R"(\x1b]0;pwned\x07aten::mm\nfake row)"));
    EXPECT_THAT(r.out, HasSubstr(R"(\x1b[2J\x1b[31mgemm\u202ecod.exe)"));
    EXPECT_THAT(r.out, Not(HasSubstr("\nfake row"))) << "a name broke a row";
  }
  const std::string md = dir_ + "/report.md";
  Result r = RunOpmap({"analyze", path, "--report", "md", "--output", md, "--gpu", "H100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(raw_controls(text), 0) << text;
  EXPECT_THAT(text, HasSubstr("x1b")) << "the names are in the report, escaped";
}

}  // namespace
}  // namespace opmap::analyze_output_test
