// ReportDocument: a report as sections of text, tables and plots, independent of the
// output format. Domain code (analysis/bottleneck, analysis/release, analysis/mfu) fills
// one; the renderers turn it into Markdown (report_markdown.h) or one self-contained HTML
// page with inline SVG plots (report_html.h). The JSON form of a report is written by the
// domain code itself (it is the machine-readable contract, docs/handoff-json.md), so this
// model carries display text only.
#ifndef OPMAP_ANALYSIS_REPORT_DOCUMENT_H_
#define OPMAP_ANALYSIS_REPORT_DOCUMENT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opmap::analysis {

// A table of display strings. `align_right[i]` marks numeric columns.
struct DocTable {
  std::string title;                    // may be empty
  std::vector<std::string> columns;
  std::vector<bool> align_right;        // empty = all left
  std::vector<std::vector<std::string>> rows;  // each row has columns.size() cells
  std::vector<std::string> notes;       // printed under the table
};

struct PlotPoint {
  double x = 0;
  double y = 0;
  std::string label;  // tooltip / legend text for the point; may be empty
  // Scatter/line markers: when any drawn point of the plot has size > 0, marker area is
  // proportional to size (radius ∝ sqrt(size / the plot's largest size)); 0 (or a
  // non-finite or negative size) keeps the default marker. Ignored by bar kinds.
  double size = 0;
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;
  bool connect = false;  // draw a polyline through the points (in order), else markers
  // CSS colour ("#1f77b4", "rgb(31,119,180)", "teal") for the series' marks and legend
  // entry; empty (or not a plain colour value) = the palette colour of the series index.
  std::string color = {};  // (default member initializers keep shorter {…} inits quiet)
};

// A reference line y = min(slope·x, cap) (a roofline: slope = peak bandwidth, cap = peak
// FLOP/s), or a horizontal line when slope is absent (an SLA). When x is set the line is
// vertical at that x instead (a roofline's ridge point) and slope/cap are not used; bar
// kinds have no x axis and say so in a note.
struct PlotLine {
  std::string name;
  std::optional<double> slope;
  double cap = 0;
  std::optional<double> x = std::nullopt;
};

// kStackedBar: the categories on x are the union of point labels over all series, in
// order of first appearance; each series is one layer of every stack, drawn bottom-up in
// series order, so a stack's height is the sum of its category's values (point.x unused;
// a label repeated within one series adds to its segment; negative values are skipped).
enum class PlotKind { kBar, kScatter, kLine, kStackedBar };

struct DocPlot {
  std::string id;      // stable HTML id ("plot-layer-time"), for tests and links
  std::string title;
  PlotKind kind = PlotKind::kBar;
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  // Bar plots: one series; each point's label is the bar's category and y its value.
  std::vector<PlotSeries> series;
  std::vector<PlotLine> lines;
  // Why the plot has no data (shown instead of an empty frame); empty when it has data.
  std::string unavailable;
};

struct DocSection {
  std::string heading;
  std::vector<std::string> paragraphs;   // plain text, one paragraph each
  std::vector<std::pair<std::string, std::string>> facts;  // key: value lines
  std::vector<DocTable> tables;
  std::vector<DocPlot> plots;
};

struct ReportDocument {
  std::string title;
  std::vector<std::pair<std::string, std::string>> header;  // key: value under the title
  std::vector<DocSection> sections;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_REPORT_DOCUMENT_H_
