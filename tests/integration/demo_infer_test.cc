// opmap-demo-infer as its users run it: the real binary in a child process. Its --json
// summary must agree with the configuration (request count, range counts per name,
// ordered percentiles), its output must not depend on threads or on an NVTX tool path,
// and bad flags must exit 2 naming the flag.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simdjson.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/run_process.h"

namespace opmap {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const char kDemo[] = OPMAP_BIN_DIR "/opmap-demo-infer";

using Result = testing::ProcessResult;

// Runs the demo with `args`, plus `env` set in the child; no shell.
Result RunDemo(const std::vector<std::string>& args,
               const std::vector<std::pair<std::string, std::string>>& env = {}) {
  return testing::RunProcess(kDemo, args, env);
}

struct Summary {
  int64_t requests = -1;
  double p50 = 0, p95 = 0, p99 = 0;
  std::string checksum;
  std::map<std::string, uint64_t> ranges;
  std::map<std::string, int64_t> per_request;  // operators[].per_request by name
};

Summary Parse(const std::string& json) {
  Summary s;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON: " << json;
    return s;
  }
  s.requests = int64_t(doc["requests"]);
  s.p50 = double(doc["latency_ms"]["p50"]);
  s.p95 = double(doc["latency_ms"]["p95"]);
  s.p99 = double(doc["latency_ms"]["p99"]);
  s.checksum = std::string(std::string_view(doc["output_checksum"]));
  for (auto [key, value] : simdjson::dom::object(doc["ranges"])) {
    s.ranges[std::string(key)] = uint64_t(value);
  }
  for (simdjson::dom::element op : simdjson::dom::array(doc["operators"])) {
    s.per_request[std::string(std::string_view(op["name"]))] = int64_t(op["per_request"]);
  }
  return s;
}

// Small and fast, yet with batch, heads and layers all above 1 so a count that ignored
// one of them would show.
const std::vector<std::string> kSmall = {"--layers", "3", "--hidden", "32",  "--heads",
                                         "2",        "--seq",    "8",  "--batch", "2",
                                         "--rate",   "2000",     "--requests", "40"};

std::vector<std::string> With(std::vector<std::string> base,
                              const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

TEST(DemoInferTest, JsonSummaryMatchesTheConfiguration) {
  Result r = RunDemo(With(kSmall, {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Summary s = Parse(r.out);
  EXPECT_EQ(s.requests, 40);
  EXPECT_GT(s.p99, 0);
  EXPECT_LE(s.p50, s.p95);
  EXPECT_LE(s.p95, s.p99);

  const uint64_t requests = 40, layers = 3;
  std::map<std::string, uint64_t> want = {{"request", requests}, {"forward", requests}};
  for (uint64_t i = 0; i < layers; ++i) want["decoder_layer." + std::to_string(i)] = requests;
  // Once per layer; layer norm and the residual add run twice per layer (attention, MLP).
  for (const char* op : {"demo::qkv_linear", "demo::attention_scores", "demo::softmax",
                         "demo::attention_context", "demo::out_linear", "demo::mlp_up_linear",
                         "demo::gelu", "demo::mlp_down_linear"}) {
    want[op] = requests * layers;
  }
  want["demo::layer_norm"] = 2 * requests * layers;
  want["demo::residual_add"] = 2 * requests * layers;
  // Once per forward pass, outside the layers.
  for (const char* op : {"demo::embedding", "demo::final_layer_norm", "demo::lm_head_linear"}) {
    want[op] = requests;
  }
  EXPECT_EQ(s.ranges, want);
  // operators[] says the same per request.
  for (const auto& [name, per_request] : s.per_request) {
    EXPECT_EQ(uint64_t(per_request) * requests, want[name]) << name;
  }
}

TEST(DemoInferTest, OperatorMessagesCarryTheShapePayload) {
  Result r = RunDemo({"--requests", "1", "--json", "--hidden", "64", "--heads", "4", "--seq",
                      "16", "--layers", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.out);
  std::map<std::string, std::string> messages;
  for (simdjson::dom::element op : simdjson::dom::array(doc["operators"])) {
    messages[std::string(std::string_view(op["name"]))] =
        std::string(std::string_view(op["message"]));
  }
  // T = 16 tokens, hidden 64: the QKV projection is a 16 x 64 x 192 matmul with bias.
  EXPECT_EQ(messages["demo::qkv_linear"],
            "demo::qkv_linear{flops=" + std::to_string(2 * 16 * 64 * 192) +
                ",bytes=" + std::to_string(4 * (16 * 64 + 64 * 192 + 192 + 16 * 192)) + "}");
  for (const auto& [name, message] : messages) {
    EXPECT_THAT(message, StartsWith(name + "{flops="));
  }
}

// Tokens, weights and arrivals come from --seed; each request is computed by one thread,
// so the result cannot depend on how many workers there are or on an NVTX tool path
// (here one that does not exist, which NVTX must ignore).
TEST(DemoInferTest, OutputIndependentOfWorkersAndNvtxToolPath) {
  Result a = RunDemo(With(kSmall, {"--json", "--workers", "1"}));
  Result b = RunDemo(With(kSmall, {"--json", "--workers", "3", "--clients", "3"}),
                     {{"NVTX_INJECTION64_PATH", "/nonexistent/libtool.so"}});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const Summary sa = Parse(a.out), sb = Parse(b.out);
  EXPECT_EQ(sa.checksum, sb.checksum);
  EXPECT_EQ(sa.ranges, sb.ranges);
  Result c = RunDemo(With(kSmall, {"--json", "--seed", "7"}));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(Parse(c.out).checksum, sa.checksum);
}

TEST(DemoInferTest, DurationModeCountsWhatItServed) {
  Result r = RunDemo({"--duration", "0.3", "--rate", "100", "--layers", "1", "--hidden", "16",
                      "--heads", "2", "--seq", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Summary s = Parse(r.out);
  EXPECT_GT(s.requests, 0);
  EXPECT_EQ(s.ranges.at("request"), uint64_t(s.requests));
  EXPECT_EQ(s.ranges.at("demo::qkv_linear"), uint64_t(s.requests));
}

TEST(DemoInferTest, TextReportAndHelp) {
  Result r = RunDemo(With(kSmall, {}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("served 40 requests"));
  EXPECT_THAT(r.out, HasSubstr("latency ms (exact over all requests, arrival to completion)"));
  Result h = RunDemo({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  for (const char* flag : {"--layers", "--hidden", "--heads", "--seq", "--batch", "--rate",
                           "--clients", "--workers", "--requests", "--duration", "--seed",
                           "--json", "--device"}) {
    EXPECT_THAT(h.out, HasSubstr(flag));
  }
}

TEST(DemoInferTest, BadFlagsExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--layers", "0"}, {"--layers"}},
      {{"--hidden", "abc"}, {"--hidden", "abc"}},
      {{"--heads", "3"}, {"--hidden", "--heads"}},  // 128 is not a multiple of 3
      {{"--rate", "-5"}, {"--rate"}},
      {{"--requests", "10", "--duration", "1"}, {"--requests", "--duration"}},
      {{"--seq"}, {"--seq", "needs a value"}},
      {{"--json=maybe"}, {"--json", "maybe"}},
      {{"--device", "tpu"}, {"--device", "tpu"}},
      {{"--bogus"}, {"--bogus"}},
      {{"--workers=2x"}, {"--workers", "2x"}},
  };
  for (const auto& [args, named] : cases) {
    Result r = RunDemo(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
    for (const std::string& word : named) EXPECT_THAT(r.err, HasSubstr(word)) << args[0];
  }
}

// Built without OPMAP_DEMO_CUDA, or with it but without a GPU (this machine): exit 2 with
// the reason. On a GPU machine with a CUDA build the run succeeds instead.
TEST(DemoInferTest, CudaDeviceUnavailableSaysWhy) {
  Result r = RunDemo({"--device", "cuda", "--requests", "4", "--json"});
  if (r.exit_code == 0) {
    EXPECT_EQ(Parse(r.out).requests, 4);
    return;
  }
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unavailable: "));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace opmap
