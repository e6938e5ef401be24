// The graph-mode serving traces in ../shared/traces/inference (a replay trace and its
// capture folder each) and TraceLens' capture-merged results beside them in
// ../shared/reference/tracelens_inference: the cases and their loading, for the tests that
// check the graph capture merge and the serving roofline against TraceLens.
#ifndef OPMAP_TESTS_TESTING_SERVING_TRACES_H_
#define OPMAP_TESTS_TESTING_SERVING_TRACES_H_

#include <memory>
#include <string>
#include <vector>

#include "analysis/graphs/capture_merge.h"
#include "analysis/model/trace.h"

namespace opmap::testing {

struct ServingCase {
  std::string replay;       // under traces/inference/
  std::string capture_dir;  // under traces/inference/
  std::string reference;    // under reference/tracelens_inference/
};

// vllm_decode_full and sglang_decode.
const std::vector<ServingCase>& ServingCases();

// A Kineto trace (a capture: no GPU event needed); a failed import is a test failure and
// an empty trace.
analysis::Trace ImportKinetoOrFail(const std::string& path, bool capture);

// A case's replay and the captures its folder's execution_details.json names, not merged.
struct ServingTraces {
  analysis::Trace replay;
  std::vector<std::unique_ptr<analysis::Trace>> captures;
  std::vector<analysis::CaptureInput> inputs;  // point into `captures`
};
ServingTraces LoadServingTraces(const ServingCase& c);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_TESTING_SERVING_TRACES_H_
