// Axis scales, number labels, text measures and the drawing pieces shared by svg_plot.cc
// and svg_plot_bars.cc, kept apart so the plot renderer reads as layout and drawing only.
// Internal to analysis/report; not a public API.
#ifndef OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_
#define OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/report/document.h"

namespace opmap::analysis::plot_internal {

// Values this large are treated like inf: their ranges and products would overflow.
inline bool Plottable(double v) { return std::isfinite(v) && std::fabs(v) < 1e300; }

// Cuts at a code-point boundary so a long kernel name never ends in half a character.
std::string Truncate(const std::string& s, size_t max_chars);

struct Formatted {
  std::string text;
  double value = 0;  // what the text says, to pick the shortest exact tick label
};

// `sig` significant digits, SI suffixes k..E from 1000 up, no exponent in between.
Formatted FormatSig(double v, int sig);

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool Empty() const { return lo > hi; }
};

struct Tick {
  double value = 0;   // data units
  std::string label;  // empty for a minor tick
};

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // domain, log10 units when log
  double px_lo = 0, px_hi = 1;
  std::vector<Tick> ticks;
  double T(double v) const { return log ? std::log10(v) : v; }
  double Map(double v) const { return px_lo + (T(v) - lo) / (hi - lo) * (px_hi - px_lo); }
  double DataLo() const { return log ? std::pow(10.0, lo) : lo; }
  double DataHi() const { return log ? std::pow(10.0, hi) : hi; }
};

// Nice 1/2/2.5/5 steps; the domain is widened to whole steps (and to 0 when asked, for bars).
Axis LinearAxis(Range r, bool include_zero);
// Whole decades of a range of positive values.
Axis LogAxis(Range r);

// Bar category labels are cut to this many code points.
constexpr size_t kMaxCategoryChars = 28;

// Pixel coordinates: one decimal is below a device pixel, and keeps the SVG small. Never
// "nan": a non-finite value (unreachable by construction) prints as 0.
std::string Px(double v);

// The SVG being written; all text goes through XmlEscape.
struct Canvas {
  std::string out;
  void Text(double x, double y, const std::string& s, const std::string& attrs);
  void Line(double x1, double y1, double x2, double y2, const std::string& attrs);
};

// The series' own colour when it is a plain CSS colour value (letters, digits and
// "#(),.%-" and spaces, at most 64 characters: nothing that could leave the attribute),
// else the Tableau 10 palette colour of the series index.
std::string SeriesColor(const PlotSeries& s, size_t index);

// ' data-series="…" data-label="…"', escaped: the stable handles of a drawn element.
std::string DataAttrs(const std::string& series, const std::string& label);

// The category bands of the bar kinds, in pixels.
struct BarFrame {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  double band = 0;        // width of one category
  bool rotate = false;    // category labels at -45°
  size_t label_every = 1; // label every k-th category when they would overlap
};

// A bar chart's categories: point labels ("#n" when empty) in order of first appearance.
// Grouped bars (kBar): a label repeated within one series opens a new category, so every
// point still gets its own bar. Stacked (kStackedBar): one category per distinct label,
// and a label repeated within one series adds to that series' segment.
class Categories {
 public:
  Categories(bool stacked, size_t n_series) : stacked_(stacked), n_series_(n_series) {}
  // Call before the points of series s, in series order.
  void BeginSeries(size_t s) {
    used_.clear();
    series_ = s;
  }
  // The category of the current series' drawn point number `p` (0-based); stacked, its
  // y joins the series' value in that category.
  int Add(const PlotPoint& pt, size_t p);
  const std::vector<std::string>& names() const { return names_; }
  // Stacked: the summed value of series s in category k (0 when it has none).
  double Value(size_t k, size_t s) const { return value_[k][s]; }

 private:
  bool stacked_;
  size_t n_series_;
  size_t series_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, std::vector<int>> by_label_;
  std::map<int, bool> used_;  // categories the current series already has a bar in
  std::vector<std::vector<double>> value_;  // [category][series]
};

// Category names under the bands (svg_plot_bars.cc).
void DrawCategoryLabels(Canvas& c, const Categories& cats, const BarFrame& f);
// One rect.mark per drawn point, side by side per category; index[s][p] is the category of
// series s's point p, -1 when it is not drawn.
void DrawBars(Canvas& c, const DocPlot& plot, const Categories& cats,
              const std::vector<std::vector<int>>& index, const Axis& ya, const BarFrame& f);
// One g.seg > rect.mark per positive (category, series) value, stacked bottom-up.
void DrawStacks(Canvas& c, const DocPlot& plot, const Categories& cats, const Axis& ya,
                const BarFrame& f);

}  // namespace opmap::analysis::plot_internal

#endif  // OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_
