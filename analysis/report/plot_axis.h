// Axis scales, number labels and text measures for svg_plot.cc, kept apart so the plot renderer reads as
// layout and drawing only. Internal to analysis/report; not a public API.
#ifndef OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_
#define OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace opmap::analysis::plot_internal {

// Values this large are treated like inf: their ranges and products would overflow.
inline bool Plottable(double v) { return std::isfinite(v) && std::fabs(v) < 1e300; }

// UTF-8 code points: the unit of the estimated text widths.
size_t CodePoints(const std::string& s);
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

}  // namespace opmap::analysis::plot_internal

#endif  // OPMAP_ANALYSIS_REPORT_PLOT_AXIS_H_
