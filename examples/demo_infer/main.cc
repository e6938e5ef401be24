// opmap-demo-infer: a small NVTX-annotated transformer-decoder inference server, the
// workload opmap's in-process capture (libopmap_inject.so) is tested against. Flags and
// output: examples/README.md and --help.
//
// Exit codes: 0 served every request; 1 a request failed in the backend; 2 bad flags or
// the requested device is unavailable.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/version/version.h"
#include "examples/demo_infer/backend.h"
#include "examples/demo_infer/flags.h"
#include "examples/demo_infer/model.h"
#include "examples/demo_infer/nvtx_marks.h"
#include "examples/demo_infer/report.h"
#include "examples/demo_infer/server.h"

namespace opmap::demo {
namespace {

int Main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--version") {
    std::fputs(VersionText("opmap-demo-infer").c_str(), stdout);
    return 0;
  }
  ParseResult parsed = ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.help) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "opmap-demo-infer: %s\n", parsed.error.c_str());
    return 2;
  }
  const Config& config = parsed.config;

  // Probe the device before building anything: without it there is nothing to serve.
  std::unique_ptr<Backend> weights;
  if (config.device == Device::kCuda) {
    std::string reason;
    weights = MakeCudaBackend(&reason);
    if (weights == nullptr) {
      std::fprintf(stderr, "opmap-demo-infer: --device cuda: unavailable: %s\n", reason.c_str());
      return 2;
    }
  } else {
    weights = MakeCpuBackend();
  }

  NvtxMarks marks;
  Model model(config, *weights, marks);
  if (!weights->Error().empty()) {
    std::fprintf(stderr, "opmap-demo-infer: loading weights: %s\n", weights->Error().c_str());
    return 1;
  }
  auto make_backend = [&]() -> std::unique_ptr<Backend> {
    if (config.device == Device::kCpu) return MakeCpuBackend();
    std::string reason;
    return MakeCudaBackend(&reason);
  };

  ReportInput report;
  report.config = &config;
  report.device = weights->Name();
  report.nvtx = NvtxMarks::Status();
  report.model = &model;
  report.serve = Serve(config, model, marks, make_backend);
  report.ranges = marks.Counts();

  if (!config.request_log.empty()) {
    if (std::string error = WriteRequestLog(config.request_log, report.serve.times);
        !error.empty()) {
      std::fprintf(stderr, "opmap-demo-infer: --request-log: %s\n", error.c_str());
      return 1;
    }
  }
  const std::string text = config.json ? JsonReport(report) : TextReport(report);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!report.serve.first_error.empty() || report.serve.failed > 0) {
    std::fprintf(stderr, "opmap-demo-infer: %llu requests failed: %s\n",
                 static_cast<unsigned long long>(report.serve.failed),
                 report.serve.first_error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace opmap::demo

int main(int argc, char** argv) { return opmap::demo::Main(argc, argv); }
