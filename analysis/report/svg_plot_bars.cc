// The bar kinds of svg_plot.h: category bookkeeping and drawing of grouped bars (kBar)
// and stacked bars (kStackedBar). Layout and the frame are svg_plot.cc's.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/report/plot_axis.h"
#include "analysis/report/svg_plot.h"

namespace opmap::analysis::plot_internal {
namespace {

std::string Rect(double x, double y, double w, double h, const std::string& fill,
                 const std::string& tip) {
  return absl::StrFormat(
      "<rect class=\"mark\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\">"
      "<title>%s</title></rect>",
      Px(x), Px(y), Px(std::max(0.5, w)), Px(std::max(0.5, h)), fill, XmlEscape(tip));
}

}  // namespace

int Categories::Add(const PlotPoint& pt, size_t p) {
  const std::string name = pt.label.empty() ? absl::StrFormat("#%d", p + 1) : pt.label;
  int cat = -1;
  for (int k : by_label_[name]) {
    if (stacked_ || !used_[k]) {
      cat = k;
      break;
    }
  }
  if (cat < 0) {
    cat = static_cast<int>(names_.size());
    names_.push_back(name);
    by_label_[name].push_back(cat);
    value_.emplace_back(n_series_, 0.0);
  }
  used_[cat] = true;
  if (stacked_ && series_ < n_series_) value_[cat][series_] += pt.y;
  return cat;
}

void DrawCategoryLabels(Canvas& c, const Categories& cats, const BarFrame& f) {
  for (size_t k = 0; k < cats.names().size(); k += f.label_every) {
    const double cx = f.x0 + (k + 0.5) * f.band;
    const std::string label = Truncate(cats.names()[k], kMaxCategoryChars);
    if (f.rotate) {
      c.Text(cx + 3, f.y1 + 12, label,
             absl::StrFormat(
                 " text-anchor=\"end\" fill=\"#333333\" transform=\"rotate(-45 %s %s)\"",
                 Px(cx + 3), Px(f.y1 + 12)));
    } else {
      c.Text(cx, f.y1 + 17, label, " text-anchor=\"middle\" fill=\"#333333\"");
    }
  }
}

void DrawBars(Canvas& c, const DocPlot& plot, const Categories& cats,
              const std::vector<std::vector<int>>& index, const Axis& ya, const BarFrame& f) {
  const double bar_w = f.band * 0.8 / std::max<size_t>(1, plot.series.size());
  const double base = ya.log ? f.y1 : ya.Map(0);
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const PlotSeries& ser = plot.series[s];
    const std::string color = SeriesColor(ser, s);
    for (size_t p = 0; p < ser.points.size(); ++p) {
      const int k = index[s][p];
      if (k < 0) continue;
      const PlotPoint& pt = ser.points[p];
      const double py = ya.Map(pt.y);
      std::string tip = cats.names()[k] + ": " + FormatPlotValue(pt.y);
      if (!ser.name.empty()) tip += " (" + ser.name + ")";
      absl::StrAppend(&c.out, "<g class=\"bar\"", DataAttrs(ser.name, cats.names()[k]), ">",
                      Rect(f.x0 + k * f.band + f.band * 0.1 + s * bar_w, std::min(py, base),
                           bar_w, std::fabs(base - py), color, tip),
                      "</g>\n");
    }
  }
}

void DrawStacks(Canvas& c, const DocPlot& plot, const Categories& cats, const Axis& ya,
                const BarFrame& f) {
  const double bar_w = f.band * 0.7;
  for (size_t k = 0; k < cats.names().size(); ++k) {
    const std::string& cat = cats.names()[k];
    double total = 0;
    double bottom = f.y1;  // the first layer starts on the axis, also on a log axis
    for (size_t s = 0; s < plot.series.size(); ++s) {
      const double v = cats.Value(k, s);
      if (!(v > 0)) continue;
      total += v;
      const double top = ya.Map(total);
      const PlotSeries& ser = plot.series[s];
      const std::string name =
          ser.name.empty() ? absl::StrFormat("series %d", s + 1) : ser.name;
      // "category · series: value"
      const std::string tip = cat + " \xC2\xB7 " + name + ": " + FormatPlotValue(v);
      absl::StrAppend(&c.out, "<g class=\"seg\"", DataAttrs(ser.name, cat), ">",
                      Rect(f.x0 + k * f.band + f.band * 0.15, std::min(top, bottom), bar_w,
                           std::fabs(bottom - top), SeriesColor(ser, s), tip),
                      "</g>\n");
      bottom = top;
    }
  }
}

}  // namespace opmap::analysis::plot_internal
