// One DocPlot (document.h) as a self-contained inline SVG for the HTML report: no scripts,
// no external fonts or stylesheets, so the page renders the same offline, in a mail client
// or in a headless browser. Strings, no I/O.
//
// Contract the tests and the HTML page rely on:
//  - the <svg> element has id = plot.id (XML-escaped) and class "opmap-plot";
//  - every drawn data point (bar, stacked segment, scatter marker, line-series marker) is
//    one element with class="mark" exactly, so a reader of the DOM can count what was drawn;
//  - each mark is wrapped in a <g> that names it: class="pt" (scatter/line markers),
//    "bar" (kBar) or "seg" (kStackedBar segment), with data-series="<series name>" and
//    data-label="<point label / category>"; every mark has a <title> tooltip;
//  - reference lines are <polyline class="ref-line"> (sloped/horizontal) or
//    <line class="vline"> (PlotLine::x), each with a <title> and a class="ref-label" text;
//  - non-finite points are skipped, and on a log axis so are non-positive values; both
//    are counted in a note under the plot, so a dropped point is never silent;
//  - no "nan"/"inf" ever appears in the output, and all text is XML-escaped.
#ifndef OPMAP_ANALYSIS_REPORT_SVG_PLOT_H_
#define OPMAP_ANALYSIS_REPORT_SVG_PLOT_H_

#include <string>

#include "analysis/report/document.h"

namespace opmap::analysis {

std::string RenderSvgPlot(const DocPlot& plot, int width, int height);

// A plot value as a short display string: SI suffixes from 1k up ("2.5M", "989T"), 4
// significant digits otherwise; "0" for zero. The Markdown point tables use it too so the
// two renderers print the same numbers.
std::string FormatPlotValue(double v);

// &, <, >, " and ' as entities; control characters other than tab/newline dropped (they
// are not allowed in XML 1.0). Shared with the HTML renderer.
std::string XmlEscape(const std::string& s);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_SVG_PLOT_H_
