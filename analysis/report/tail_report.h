// Rendering of the per-request breakdown and tail explanation (analysis/summary/
// tail_explanation.h) for `opmap analyze`: the JSON object "tail" and a table section.
#ifndef OPMAP_ANALYSIS_REPORT_TAIL_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_TAIL_REPORT_H_

#include <string>

#include "analysis/report/document.h"
#include "analysis/summary/tail_explanation.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

// Adds "tail" to the open object; `top` rows per excess list (0 = all).
void TailJson(text::JsonWriter& w, const RequestTailSummary& s, int top);
std::string TailTable(const RequestTailSummary& s, int top);
// The handoff and release reports' section: the sentence per key and quantile, and the
// excess tables of the p99 tail (Markdown / HTML).
DocSection TailSection(const RequestTailSummary& s, int top);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_TAIL_REPORT_H_
