// opmap: the command-line front end. Each subcommand lives in its own file.
#include <iostream>
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/huge_page_malloc.h"
#include "cli/attach_command.h"
#include "cli/export_command.h"
#include "cli/import_command.h"
#include "cli/query_command.h"
#include "cli/report_command.h"
#include "cli/signoff_command.h"
#include "common/version/version.h"

namespace {

constexpr char kUsage[] = R"(usage: opmap COMMAND [ARGS...]

opmap maps what ML inference processes run on GPUs back to the operators and layers of
the model: latency percentiles, time breakdowns, MFU, bottlenecks with their evidence,
and release recommendations.

commands:
  analyze TRACE...   offline analysis of Kineto traces, Nsight exports and capture files;
                     --report md|json|html: the handoff packet (MFU, bottlenecks, ...)
  attach --pid N     capture a window from a running process now, with a local report
  import TRACE...    send traces to a collector, exactly as an agent would
  query WHAT         latency percentiles, time breakdown or top kernels from a collector
  export             a collector's events as a Chrome-trace / Perfetto JSON file
  report             release recommendation: --baseline REV --candidate REV
  signoff REPORT     record an owner's approval of a report in the collector's store
  version            this build's version, build type and CUDA/CUPTI (also --version)
  help               this text

run 'opmap COMMAND --help' for a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "analyze" || command == "import") opmap::cli::ReexecWithHugePageMalloc(argv);
  if (command == "analyze") return opmap::cli::RunAnalyze(args);
  if (command == "import") return opmap::cli::RunImport(args);
  if (command == "attach") return opmap::cli::RunAttach(args);
  if (command == "query") return opmap::cli::RunQuery(args);
  if (command == "export") return opmap::cli::RunExport(args);
  if (command == "report") return opmap::cli::RunReport(args);
  if (command == "signoff") return opmap::cli::RunSignoff(args);
  if (command == "--version" || command == "version") {
    std::cout << opmap::VersionText("opmap");
    return 0;
  }
  if (command == "help" || command == "-h" || command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "opmap: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
