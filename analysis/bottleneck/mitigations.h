// Mitigation proposals for the top bottlenecks (docs/metrics.md "Mitigations by class"), each
// with an owner role, an upper bound on the gain, the validation scope and the rollback
// boundary. Bounds are Amdahl bounds on the trace's own figures, never promises:
// e.g. a memory-bound operator can at best run at the roofline time
// max(FLOPs / peak, bytes / bandwidth), so the bound is (time − roofline time) ÷ total.
#ifndef OPMAP_ANALYSIS_BOTTLENECK_MITIGATIONS_H_
#define OPMAP_ANALYSIS_BOTTLENECK_MITIGATIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/bottleneck/bottleneck_class.h"
#include "analysis/report/document.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

enum class OwnerRole : uint8_t {
  kMlCompilerEngineer = 0,
  kRuntimeSystemsEngineer = 1,
  kPerformanceModelingOwner = 2,
};

// "ML compiler engineer", "runtime systems engineer", "performance modeling owner".
std::string_view OwnerRoleName(OwnerRole r);
// Accepts those names and "compiler", "runtime", "modeling" (ASCII case ignored).
std::optional<OwnerRole> ParseOwnerRole(std::string_view text);

struct Mitigation {
  std::string subject;            // operator or layer type it targets
  BottleneckClass cls = BottleneckClass::kUnclassified;
  std::string action;             // e.g. "CUDA graphs / torch.compile"
  OwnerRole owner = OwnerRole::kRuntimeSystemsEngineer;
  // Upper bound of the end-to-end time saved, as a fraction of the total (0..1) and ns;
  // nullopt with `gain_basis` saying why when no bound can be computed.
  std::optional<double> gain_bound_fraction;
  std::optional<int64_t> gain_bound_ns;
  std::string gain_basis;         // how the bound was computed
  std::string validation_scope;   // what must be re-measured before shipping it
  std::string rollback_boundary;  // what is reverted if it regresses
  std::vector<Evidence> evidence; // from the classification that triggered it
};

// What the class's mitigation is, its owner, and what must be re-measured or reverted for
// `subject` (docs/metrics.md "Mitigations by class (owner)"); unclassified: measure the
// missing figures (performance modeling owner).
struct ClassPlan {
  std::string action;
  OwnerRole owner = OwnerRole::kRuntimeSystemsEngineer;
  std::string validation_scope;
  std::string rollback_boundary;
};
ClassPlan PlanForClass(BottleneckClass cls, std::string_view subject);

struct MitigationInput {
  OperatorFigures figures;
  Classification classification;
};

// Proposals for the `top` subjects by GPU time whose class has a mitigation, ordered by
// gain bound (largest first). `total_ns` is the denominator for fractions (the trace's
// summed GPU time, or the request time).
std::vector<Mitigation> ProposeMitigations(const std::vector<MitigationInput>& subjects,
                                           int64_t total_ns, const HardwareEnvelope* envelope,
                                           int top);

void WriteMitigationsJson(const std::vector<Mitigation>& mitigations, text::JsonWriter& w);
DocSection MitigationsSection(const std::vector<Mitigation>& mitigations);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_BOTTLENECK_MITIGATIONS_H_
