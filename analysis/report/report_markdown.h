// A ReportDocument (document.h) as GitHub-flavoured Markdown: the form that goes into a
// pull request, an issue or a chat message. Plots cannot be drawn in Markdown, so each
// becomes one line pointing at the HTML report plus a compact table of its points (at most
// 20 rows), or the reason it is unavailable. Strings, no I/O.
#ifndef OPMAP_ANALYSIS_REPORT_REPORT_MARKDOWN_H_
#define OPMAP_ANALYSIS_REPORT_REPORT_MARKDOWN_H_

#include <string>

#include "analysis/report/document.h"

namespace opmap::analysis {

std::string RenderMarkdown(const ReportDocument& doc);

// Text escaped for inline Markdown: \ ` * [ ] < > | always, _ at a word boundary (GitHub
// does not emphasise inside words, so "layer_norm" stays readable in the raw file), and
// newlines as spaces. Exposed for the tests.
std::string MarkdownEscape(const std::string& s);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_REPORT_MARKDOWN_H_
