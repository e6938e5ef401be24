// `opmap analyze TRACE --report md|json|html`: the handoff packet of analysis/handoff for
// one trace, written to stdout or --output FILE with its report marker (kind=handoff),
// so `opmap signoff` can record an owner's approval of it.
#ifndef OPMAP_CLI_HANDOFF_OUTPUT_H_
#define OPMAP_CLI_HANDOFF_OUTPUT_H_

#include <string>
#include <string_view>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "absl/status/status.h"
#include "analysis/summary/trace_summary.h"
#include "cli/command_flags.h"
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

// --report, --output, --profile, --envelope and --gpu, shared by analyze and attach, as
// keys for cli/command_flags.h.
absl::Status SetHandoffFlag(std::string_view flag, std::string_view value, HandoffArgs* args);
template <typename C>
void AddHandoffKeys(HandoffArgs C::*field, FlagKeys<C>* keys) {
  for (std::string_view name : {"report", "output", "profile", "envelope", "gpu"}) {
    keys->push_back({name, false, "", "", [field, name](std::string_view v, C* c) {
                       return SetHandoffFlag(name, v, &(c->*field));
                     }});
  }
}
// The usage error when the other flags come without --report, else "".
std::string HandoffFlagsWithoutReport(const HandoffArgs& args);

// 0 written; 2 bad profile/envelope or unwritable output (message on stderr).
int WriteHandoff(const HandoffArgs& args, const std::string& trace_path,
                 const analysis::Trace& trace, const analysis::MappingResult& mapping,
                 const analysis::TraceSummary& summary);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_HANDOFF_OUTPUT_H_
