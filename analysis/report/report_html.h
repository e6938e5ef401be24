// A ReportDocument (document.h) as ONE self-contained HTML page: inline CSS, inline SVG
// plots (svg_plot.h), no scripts, fonts or other external requests, so the file can be
// attached to a ticket, mailed or opened offline and looks the same everywhere. Laid out
// for a 1280 px wide window; plots scale down with the page. Strings, no I/O.
//
// Ids: each plot's <svg> keeps plot.id (unsafe characters become '-', an empty or repeated
// id gets a numbered one) so links and tests can find it; sections get "section-N".
#ifndef OPMAP_ANALYSIS_REPORT_REPORT_HTML_H_
#define OPMAP_ANALYSIS_REPORT_REPORT_HTML_H_

#include <string>

#include "analysis/report/document.h"

namespace opmap::analysis {

std::string RenderHtml(const ReportDocument& doc);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_REPORT_HTML_H_
