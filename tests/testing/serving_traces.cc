#include "tests/testing/serving_traces.h"

#include <utility>

#include "analysis/graphs/execution_details.h"
#include "analysis/import/kineto_importer.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing {

const std::vector<ServingCase>& ServingCases() {
  static const std::vector<ServingCase>* const cases = new std::vector<ServingCase>{
      {"vllm_decode_full/graph_execution.json.gz", "vllm_decode_full/capture_traces",
       "vllm_decode_full"},
      {"sglang_decode/sglang_Qwen3-8B_decode.json.gz", "sglang_decode/capture_traces",
       "sglang_decode"},
  };
  return *cases;
}

analysis::Trace ImportKinetoOrFail(const std::string& path, bool capture) {
  analysis::KinetoImportOptions options;
  options.allow_no_gpu_events = capture;
  absl::StatusOr<analysis::Trace> t = analysis::ImportKinetoBytes(ReadFileOrDie(path), options);
  EXPECT_TRUE(t.ok()) << path << ": " << t.status();
  return t.ok() ? std::move(*t) : analysis::Trace{};
}

ServingTraces LoadServingTraces(const ServingCase& c) {
  ServingTraces out;
  out.replay = ImportKinetoOrFail(SharedPath("traces/inference/" + c.replay), false);
  const std::string dir = SharedPath("traces/inference/" + c.capture_dir);
  absl::StatusOr<std::vector<analysis::CaptureFileEntry>> entries =
      analysis::ParseExecutionDetails(ReadFileOrDie(dir + "/execution_details.json"));
  EXPECT_TRUE(entries.ok()) << entries.status();
  if (!entries.ok()) return out;
  for (const analysis::CaptureFileEntry& e : *entries) {
    out.captures.push_back(
        std::make_unique<analysis::Trace>(ImportKinetoOrFail(dir + "/" + e.file, true)));
    out.inputs.push_back({out.captures.back().get(), e.file, e.batch_size, e.mode});
  }
  return out;
}

}  // namespace opmap::testing
