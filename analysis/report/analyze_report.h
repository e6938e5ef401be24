// Renders TraceSummary as JSON (the documented machine format, docs/analyze-json.md),
// an aligned text table for people, or CSV (one long table; the `section` column says
// which part a row belongs to). Strings in, strings out: no I/O here.
#ifndef OPMAP_ANALYSIS_REPORT_ANALYZE_REPORT_H_
#define OPMAP_ANALYSIS_REPORT_ANALYZE_REPORT_H_

#include <string>
#include <string_view>

#include "analysis/summary/trace_summary.h"

namespace opmap::analysis {

struct ReportOptions {
  std::string source;  // file name shown in the report
  int top = 0;         // rows of operators/kernels to show; 0 = all
  bool launches = false;  // JSON: add "launches" (TraceSummary::launches, one per event)
};

std::string RenderAnalyzeJson(const TraceSummary& summary, const ReportOptions& options);
std::string RenderAnalyzeTable(const TraceSummary& summary, const ReportOptions& options);

std::string RenderAnalyzeCsv(const TraceSummary& summary, const ReportOptions& options,
                             bool with_header);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_ANALYZE_REPORT_H_
