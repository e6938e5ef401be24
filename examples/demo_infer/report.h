// The run summary: a human-readable table, or with --json one JSON object on one line
// (fields documented in examples/README.md). Latency percentiles are exact over every
// request: linear interpolation between closest ranks (numpy's default), as opmap analyze.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_REPORT_H_
#define OPMAP_EXAMPLES_DEMO_INFER_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "examples/demo_infer/flags.h"
#include "examples/demo_infer/model.h"
#include "examples/demo_infer/server.h"

namespace opmap::demo {

// q in [0, 1]; `sorted` ascending and non-empty.
double ExactQuantile(const std::vector<int64_t>& sorted, double q);

struct ReportInput {
  const Config* config;
  std::string device;  // "cpu" or "cuda: <GPU name>"
  std::string nvtx;    // NvtxMarks::Status()
  const Model* model;
  ServeResult serve;
  std::map<std::string, uint64_t> ranges;  // NvtxMarks::Counts()
};

std::string TextReport(const ReportInput& in);
std::string JsonReport(const ReportInput& in);

// Writes `times` to `path`, sorted by id, one "id start_before start_after end_before
// end_after" line each after a "# " header line. Returns an error text or "".
std::string WriteRequestLog(const std::string& path, std::vector<RequestTimes> times);

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_REPORT_H_
