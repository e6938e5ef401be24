// Display and JSON forms of Evidence and Classification, shared by the mapping sheet and
// the mitigation report so both print a missing figure the same way
// ("unavailable: <reason>", JSON null plus a `missing` field), never as 0.
#ifndef OPMAP_ANALYSIS_BOTTLENECK_EVIDENCE_FORMAT_H_
#define OPMAP_ANALYSIS_BOTTLENECK_EVIDENCE_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>

#include "analysis/bottleneck/bottleneck_class.h"
#include "common/text/json_writer.h"

namespace opmap::analysis::bottleneck_format {

// Three significant digits, e.g. "0.752", "295", "7.39e+07".
std::string Number(double v);
// A duration in ns shown in µs with one decimal: "12.3 µs".
std::string UsText(double ns);
// `v` with its unit ("0.75", "12.0 µs" for ns, "295 FLOP/B"), or "unavailable: <why>".
std::string ValueOr(std::optional<double> v, std::string_view unit, std::string_view why);
// One evidence row as "figure = value (rule: met|not met)".
std::string EvidenceValue(const Evidence& e);
std::string EvidenceLine(const Evidence& e);

void WriteEvidenceJson(const Evidence& e, text::JsonWriter& w);
// {"class", "u_compute", "u_memory", "intensity", "ridge", "summary", "evidence": [...]}.
void WriteClassificationJson(const Classification& c, text::JsonWriter& w);
// Key followed by the value or null.
void OptionalDouble(text::JsonWriter& w, std::string_view key, std::optional<double> v,
                    int decimals = 6);

}  // namespace opmap::analysis::bottleneck_format

#endif  // OPMAP_ANALYSIS_BOTTLENECK_EVIDENCE_FORMAT_H_
