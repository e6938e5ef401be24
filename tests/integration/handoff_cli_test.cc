// `opmap analyze TRACE --report json` on the shared H100 BERT trace, as a user runs it:
// MFU per operator from Input Dims (figures computed by hand from the raw JSON, see
// tests/unit/mfu/mfu_trace_test.cc), the workload-profile MFU, the bottleneck class with
// its evidence, mitigations with owners, and the errors a bad profile gives.
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/run_process.h"
#include "tests/testing/shared_data.h"

namespace opmap {
namespace {

using ::testing::HasSubstr;

constexpr char kTrace[] = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";

testing::ProcessResult Opmap(const std::vector<std::string>& args) {
  return testing::RunProcess(OPMAP_BIN_DIR "/opmap", args);
}

class HandoffCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "opmap_handoff_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
  simdjson::dom::parser parser_;
};

simdjson::dom::element Operator(simdjson::dom::element doc, std::string_view name) {
  // A named array: value_unsafe() of a temporary result must not be ranged over.
  simdjson::dom::array o_list = doc["mfu"]["operators"].get_array().value_unsafe();
  for (simdjson::dom::element o : o_list) {
    if (std::string_view(o["name"].get_string().value_unsafe()) == name) return o;
  }
  ADD_FAILURE() << "no operator " << name;
  return {};
}

TEST_F(HandoffCli, H100BertMfuBottlenecksAndMitigations) {
  OPMAP_REQUIRE_SHARED(kTrace);
  // bert-small: N = 4 layers × 12·512² (≈ 12.6 M); the figure only has to match by hand.
  //   prefill of P = 141: 2·N·P + 2·L·d·P² = 2·12582912·141 + 2·4·512·141² = 3,548,381,184
  //   + 81,432,576 = 3,629,813,760 FLOPs per request.
  const std::string profile = Write("bert.profile",
                                    "model = bert-small\nparameters = 12582912\nlayers = 4\n"
                                    "heads = 8\nhead_dim = 64\nhidden = 512\nprecision = bf16\n"
                                    "prefill_tokens = 141\n");
  const std::string out = dir_ + "/bert.json";
  auto r = Opmap({"analyze", testing::SharedPath(kTrace), "--report", "json", "--profile", profile,
                  "--output", out, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  simdjson::dom::element doc;
  ASSERT_EQ(parser_.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 400);
  EXPECT_THAT(std::string(doc["marker"].get_string().value_unsafe()),
              HasSubstr("opmap-report kind=handoff baseline= candidate=tl_h100_gaunernst"));
  EXPECT_EQ(std::string_view(doc["envelope"].get_string().value_unsafe()), "H100 SXM5 80GB");
  // The build that made the report (a reproducibility input): the binary's own version.
  const auto version = testing::RunProcess(std::string(OPMAP_BIN_DIR) + "/opmap", {"--version"});
  EXPECT_THAT(version.out, HasSubstr(std::string("opmap ") +
                                     std::string(doc["opmap_version"].get_string().value_unsafe()) +
                                     "\n"));
  EXPECT_THAT(std::string(doc["opmap_version"].get_string().value_unsafe()), ::testing::StartsWith("0."));

  // The tail section: one ProfilerStep, broken down whole, too few for a tail.
  EXPECT_EQ(doc["tail"]["requests"].get_int64().value_unsafe(), 1);
  EXPECT_EQ(doc["tail"]["max_sum_error_ns"].get_int64().value_unsafe(), 0);
  EXPECT_EQ(std::string_view(doc["tail"]["explanations"].at(0)["unavailable"].get_string().value_unsafe()),
            "1 request of ProfilerStep, fewer than the 20 a tail needs");

  // Per operator, every instance summed (by hand: mfu_trace_test.cc).
  simdjson::dom::element addmm = Operator(doc, "aten::addmm");
  EXPECT_EQ(addmm["instances"].get_int64().value_unsafe(), 26);
  EXPECT_EQ(addmm["flops"].get_double().value_unsafe(), 8036168946.0);
  EXPECT_NEAR(addmm["mfu"].get_double().value_unsafe(), 0.0411050, 5e-7);
  EXPECT_EQ(std::string_view(addmm["precision"].get_string().value_unsafe()), "bf16");
  simdjson::dom::element flash = Operator(doc, "aten::_flash_attention_forward");
  EXPECT_EQ(flash["flops"].get_double().value_unsafe(), 162865152.0);
  EXPECT_NEAR(flash["mfu"].get_double().value_unsafe(), 0.0044004, 5e-7);
  // native_layer_norm: 10 instances of 5·N + 6·C = 364,032 FLOPs (N = 141·512, C = 512).
  simdjson::dom::element norm = Operator(doc, "aten::native_layer_norm");
  EXPECT_EQ(norm["flops"].get_double().value_unsafe(), 3640320.0);
  // An operator no formula covers says why: the DtoH copy behind .item().
  simdjson::dom::element scalar = Operator(doc, "aten::_local_scalar_dense");
  EXPECT_TRUE(scalar["mfu"].is_null());
  EXPECT_THAT(std::string(scalar["unavailable"].get_string().value_unsafe()),
              HasSubstr("no FLOPs/bytes formula for aten::_local_scalar_dense"));

  // Roofline groups: per (operator, shapes, dtypes, concrete inputs), every group costed
  // (99.3% of the mapped GPU time has FLOPs and bytes: only .item()'s copy has none), all
  // classified; the QKV-projection addmm group matches TraceLens' figures.
  simdjson::dom::element sheet;
  ASSERT_EQ(doc["mapping_sheet"].get(sheet), simdjson::SUCCESS);
  double costed = 0, classified = 0;
  ASSERT_EQ(sheet["coverage"]["costed_share"].get_double().get(costed), simdjson::SUCCESS);
  ASSERT_EQ(sheet["coverage"]["classified_share"].get_double().get(classified), simdjson::SUCCESS);
  EXPECT_NEAR(costed, 0.9928, 1e-4);
  EXPECT_EQ(classified, 1.0);
  simdjson::dom::array groups;
  ASSERT_EQ(sheet["groups"].get_array().get(groups), simdjson::SUCCESS);
  bool saw_qkv = false;
  for (simdjson::dom::element g : groups) {
    if (std::string_view(g["operator"].get_string().value_unsafe()) != "aten::addmm" ||
        std::string_view(g["input_dims"].get_string().value_unsafe()) !=
            "[[512], [141, 512], [512, 512], [], []]") {
      continue;
    }
    saw_qkv = true;
    EXPECT_EQ(g["instances"].get_int64().value_unsafe(), 17);
    EXPECT_EQ(g["flops"].get_double().value_unsafe(), 17 * 73996800.0);
    EXPECT_EQ(g["bytes"].get_double().value_unsafe(), 17 * 814080.0);
    EXPECT_EQ(std::string_view(g["bytes_source"].get_string().value_unsafe()), "formula");
    EXPECT_NEAR(g["intensity_flop_per_byte"].get_double().value_unsafe(), 90.8962, 1e-4);
    EXPECT_EQ(std::string_view(g["expected"].get_string().value_unsafe()), "memory-bound");
    EXPECT_EQ(std::string_view(g["observed"]["class"].get_string().value_unsafe()), "host-starved");
  }
  EXPECT_TRUE(saw_qkv);

  // Whole steps from the profile: FLOPs per request by hand; MFU over the iteration's
  // wall time at the BF16 peak.
  simdjson::dom::element pm = doc["profile_mfu"];
  EXPECT_EQ(pm["flops_per_request"].get_double().value_unsafe(), 3629813760.0);
  simdjson::dom::array requests = doc["mfu"]["requests"].get_array().value_unsafe();
  ASSERT_EQ(requests.size(), 1u);
  const double dur_s = static_cast<double>(requests.at(0)["dur_ns"].get_int64().value_unsafe()) * 1e-9;
  EXPECT_NEAR(pm["mfu"].get_double().value_unsafe(), 3629813760.0 / (dur_s * 989.4e12), 1e-8);
  EXPECT_THAT(std::string(pm["mbu_basis"].get_string().value_unsafe()), HasSubstr("not decode=1"));

  // The trace is host-bound: matmul, its largest layer type, is host-starved with the
  // evidence that decided it, and the top mitigation goes to the runtime engineer.
  simdjson::dom::element matmul = doc["bottlenecks_by_layer_type"].at(0);
  EXPECT_EQ(std::string_view(matmul["layer_type"].get_string().value_unsafe()), "matmul");
  EXPECT_EQ(std::string_view(matmul["classification"]["class"].get_string().value_unsafe()),
            "host-starved");
  // Roofline: its GEMMs (90.9–110 FLOP/B) are below the bf16 ridge 295.3.
  EXPECT_EQ(std::string_view(matmul["expected"].get_string().value_unsafe()), "memory-bound");
  // Rules in docs/metrics.md order: not collective, no communication, then host-starved with
  // host wait 2,308,154 ns (bottleneck_test checks it against the raw JSON) of GPU time +
  // idle before matmul kernels: 0.921142.
  simdjson::dom::array e_list = matmul["classification"]["evidence"].get_array().value_unsafe();
  ASSERT_EQ(e_list.size(), 3u);
  EXPECT_FALSE(e_list.at(0)["met"].get_bool().value_unsafe());
  EXPECT_FALSE(e_list.at(1)["met"].get_bool().value_unsafe());
  EXPECT_EQ(std::string_view(e_list.at(2)["figure"].get_string().value_unsafe()),
            "host-wait idle share");
  EXPECT_TRUE(e_list.at(2)["met"].get_bool().value_unsafe());
  EXPECT_NEAR(e_list.at(2)["value"].get_double().value_unsafe(), 0.921142, 1e-6);
  simdjson::dom::element top = doc["mitigations"].at(0);
  EXPECT_EQ(std::string_view(top["owner"].get_string().value_unsafe()), "runtime systems engineer");
  EXPECT_FALSE(top["gain_bound_fraction"].is_null());
}

TEST_F(HandoffCli, BadInputsExitTwoNamingTheFile) {
  OPMAP_REQUIRE_SHARED(kTrace);
  const std::string bad = Write("bad.profile", "model = m\nparameters = 1e6\nlayers = four\n");
  auto r = Opmap({"analyze", testing::SharedPath(kTrace), "--report", "md", "--profile", bad, "--quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--profile " + bad + ": line 3: key 'layers'"));
  EXPECT_TRUE(r.out.empty());

  r = Opmap({"analyze", testing::SharedPath(kTrace), "--report", "pdf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--report: 'pdf' (expected md, json or html)"));
  r = Opmap({"analyze", testing::SharedPath(kTrace), "--profile", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("go with --report"));
  r = Opmap({"analyze", testing::SharedPath(kTrace), testing::SharedPath(kTrace), "--report", "md"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--report takes exactly one TRACE"));
  r = Opmap({"analyze", testing::SharedPath(kTrace), "--report", "md", "--gpu", "T4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--gpu: no envelope for 'T4'; pass --envelope FILE"));
}

}  // namespace
}  // namespace opmap
