// The three forms of a report file (Markdown, JSON, one self-contained HTML page), each
// carrying its marker line (report_marker.h) so `opmap signoff` can sign it, and the
// write to stdout or to the user's --output FILE (atomically: temp file + rename).
#ifndef OPMAP_CLI_REPORT_OUTPUT_H_
#define OPMAP_CLI_REPORT_OUTPUT_H_

#include <optional>
#include <string>
#include <string_view>

#include "analysis/report/document.h"
#include "cli/report_marker.h"

namespace opmap::cli {

enum class ReportFormat { kMarkdown, kJson, kHtml };

// "md"/"markdown", "json", "html"; nullopt otherwise.
std::optional<ReportFormat> ParseReportFormat(std::string_view text);

// Markdown or HTML from the document, the marker in a comment; for JSON, `json_object`
// (one object, "{...}") gets a leading "marker" field.
std::string RenderReport(ReportFormat format, const analysis::ReportDocument& doc,
                         const std::string& json_object, const ReportMarker& marker);

// Writes to `path` (temp file in the same folder, then rename), or stdout when empty.
// Returns an error message, empty on success.
std::string WriteReport(const std::string& path, const std::string& text);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_OUTPUT_H_
