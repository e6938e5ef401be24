// The input files reports take: the workload profile (--profile FILE) and the hardware
// envelope (--envelope FILE, or a built-in one by --gpu NAME). Errors name the flag and
// the file ("--profile demo.profile: line 3: key 'layers': ...").
#ifndef OPMAP_CLI_REPORT_INPUTS_H_
#define OPMAP_CLI_REPORT_INPUTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"

namespace opmap::cli {

absl::StatusOr<analysis::WorkloadProfile> LoadProfile(const std::string& path);
absl::StatusOr<analysis::HardwareEnvelope> LoadEnvelope(const std::string& path);
// A built-in envelope by name (docs/envelopes.md lists them) or a GPU name a trace spells.
absl::StatusOr<analysis::HardwareEnvelope> BuiltinEnvelope(const std::string& gpu);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_INPUTS_H_
