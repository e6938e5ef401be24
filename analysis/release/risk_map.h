// The owner and risk map (docs/metrics.md "Owner and risk map"): every open risk of a
// release recommendation or a fit matrix — a rollback trigger that held, fired or came
// near (fired but not yet for the hold), evidence that is unclassified, missing quality
// evidence for a precision or sparsity change, missing power data, an SLA or power budget
// missed — each with its owner role, mitigation and rollback boundary.
#ifndef OPMAP_ANALYSIS_RELEASE_RISK_MAP_H_
#define OPMAP_ANALYSIS_RELEASE_RISK_MAP_H_

#include <string>
#include <vector>

#include "analysis/release/fit_matrix.h"
#include "analysis/release/release_recommendation.h"
#include "analysis/report/document.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

struct Risk {
  std::string arm;               // the arm it belongs to ("" = the comparison as a whole)
  // "trigger held", "near trigger", "unclassified evidence", "missing quality evidence",
  // "missing power data", "missing evidence", "SLA missed", "power budget".
  std::string kind;
  std::string subject;           // the trigger, layer type or figure
  std::string evidence;
  std::string owner;             // owner role (mitigations.h OwnerRoleName)
  std::string mitigation;
  std::string rollback_boundary;
};

// Risks of a release: triggers (held / fired but not held / not evaluable), required
// validation rows without evidence, and missing power data of either arm.
std::vector<Risk> ReleaseRisks(const ReleaseInputs& inputs, const Recommendation& r);
// Risks of a fit: per arm, the SLA or targets missed, triggers against the best arm,
// unclassified layer types and missing power data.
std::vector<Risk> FitRisks(const FitInputs& inputs, const FitResult& fit);

void WriteRisksJson(const std::vector<Risk>& risks, text::JsonWriter& w);
DocSection RiskMapSection(const std::vector<Risk>& risks);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_RISK_MAP_H_
