// `opmap analyze TRACE --report md|json|html`: the handoff packet of analysis/handoff for
// one trace, written to stdout or --output FILE with its report marker (kind=handoff),
// so `opmap signoff` can record an owner's approval of it.
#ifndef OPMAP_CLI_HANDOFF_OUTPUT_H_
#define OPMAP_CLI_HANDOFF_OUTPUT_H_

#include <string>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/summary/trace_summary.h"
#include "cli/report_output.h"

namespace opmap::cli {

struct HandoffArgs {
  ReportFormat format = ReportFormat::kMarkdown;
  std::string output;         // "" = stdout
  std::string profile_path;   // --profile
  std::string envelope_path;  // --envelope
  std::string gpu;            // --gpu
  int top = 20;
  bool report = false;        // --report was given
};

// --report, --output, --profile, --envelope and --gpu, shared by analyze and attach.
// False when `flag` is none of them. `value` is the flag's argument (null: missing);
// *error is set when it is missing or bad.
bool ParseHandoffFlag(const std::string& flag, const std::string* value, HandoffArgs* args,
                      std::string* error);
// The usage error when the other flags come without --report, else "".
std::string HandoffFlagsWithoutReport(const HandoffArgs& args);

// 0 written; 2 bad profile/envelope or unwritable output (message on stderr).
int WriteHandoff(const HandoffArgs& args, const std::string& trace_path,
                 const analysis::Trace& trace, const analysis::MappingResult& mapping,
                 const analysis::TraceSummary& summary);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_HANDOFF_OUTPUT_H_
