#include "analysis/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/report/plot_axis.h"
#include "common/text/utf8.h"

namespace opmap::analysis {
namespace {

using plot_internal::Axis;
using plot_internal::BarFrame;
using plot_internal::Canvas;
using plot_internal::Categories;
using plot_internal::DataAttrs;
using plot_internal::kMaxCategoryChars;
using plot_internal::LinearAxis;
using plot_internal::LogAxis;
using plot_internal::Plottable;
using plot_internal::Px;
using plot_internal::Range;
using plot_internal::SeriesColor;
using plot_internal::Tick;
using plot_internal::Truncate;
using text::Utf8CodePoints;  // the unit of the estimated text widths

// Reference lines are dark and dashed so they never read as a data series; six of them
// (one roofline and one ridge per precision) still tell apart.
constexpr const char* kLineColors[] = {"#222222", "#c0392b", "#6c3483",
                                       "#1f618d", "#117a65", "#9a7d0a"};
constexpr const char* kLineDashes[] = {"7 4", "3 3", "10 3 2 3", "5 2", "2 4", "12 4"};
constexpr int kLineStyles = 6;
constexpr double kCharWidth = 6.5;  // average glyph width of the 11px sans-serif text
// Sized markers (PlotPoint::size): radius ∝ sqrt(size / largest size), so area ∝ size.
constexpr double kMaxRadius = 18, kMinRadius = 2.5;

enum class Swatch { kBox, kDot, kSolid, kDashed };

struct LegendItem {
  std::string name, color, dash;
  Swatch swatch = Swatch::kBox;
};

std::string Plural(long n, const char* one, const char* many) {
  return absl::StrFormat("%d %s", n, n == 1 ? one : many);
}

}  // namespace

std::string FormatPlotValue(double v) { return plot_internal::FormatSig(v, 4).text; }

namespace {

// One plot being drawn: the steps share the scales and the frame, so they are members.
class Plotter {
 public:
  Plotter(const DocPlot& plot, int width, int height)
      : plot_(plot),
        w_(std::max(width, 240)),
        h_(std::max(height, 160)),
        stacked_(plot.kind == PlotKind::kStackedBar),
        bar_(plot.kind == PlotKind::kBar || stacked_),
        cats_(stacked_, plot.series.size()) {}

  std::string Render() {
    Open();
    if (!plot_.unavailable.empty()) return Unavailable(plot_.unavailable);
    const long marks = Collect();
    if (marks == 0) return Unavailable("no plottable points");
    Layout();
    DrawLegend();
    DrawAxes();
    if (bar_) plot_internal::DrawCategoryLabels(c_, cats_, frame_);
    if (stacked_)
      plot_internal::DrawStacks(c_, plot_, cats_, ya_, frame_);
    else if (bar_)
      plot_internal::DrawBars(c_, plot_, cats_, index_, ya_, frame_);
    else
      DrawPoints();
    DrawLines();
    c_.out += "</svg>\n";
    return c_.out;
  }

 private:
  bool Connect(const PlotSeries& s) const { return s.connect || plot_.kind == PlotKind::kLine; }

  void Open() {
    absl::StrAppendFormat(
        &c_.out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"opmap-plot\" "
        "width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" role=\"img\" "
        "font-family=\"'DejaVu Sans', 'Liberation Sans', Arial, sans-serif\" font-size=\"11\">\n"
        "<title>%s</title>\n<rect class=\"frame\" x=\"0.5\" y=\"0.5\" width=\"%s\" height=\"%s\" "
        "fill=\"#ffffff\" stroke=\"#d0d0d0\"/>\n",
        XmlEscape(plot_.id), Px(w_), Px(h_), Px(w_), Px(h_), XmlEscape(plot_.title), Px(w_ - 1),
        Px(h_ - 1));
    c_.Text(w_ / 2, 20, plot_.title,
            " text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  }

  // The frame keeps its size, so a missing plot does not shift the page around it.
  std::string Unavailable(const std::string& why) {
    c_.Text(w_ / 2, h_ / 2, "Unavailable: " + why,
            " class=\"unavailable\" text-anchor=\"middle\" font-size=\"13\" fill=\"#666666\"");
    for (size_t i = 0; i < notes_.size(); ++i) {
      c_.Text(w_ / 2, h_ / 2 + 18 * (i + 1), notes_[i],
              " class=\"note\" text-anchor=\"middle\" fill=\"#666666\"");
    }
    c_.out += "</svg>\n";
    return c_.out;
  }

  // Which points are drawn, the data ranges, and what was skipped (said in a note).
  long Collect() {
    long non_finite = 0, non_positive = 0, negative = 0, marks = 0;
    for (size_t s = 0; s < plot_.series.size(); ++s) {
      cats_.BeginSeries(s);
      std::vector<int> idx;
      for (size_t p = 0; p < plot_.series[s].points.size(); ++p) {
        const PlotPoint& pt = plot_.series[s].points[p];
        idx.push_back(-1);
        if (!Plottable(pt.y) || (!bar_ && !Plottable(pt.x))) {
          ++non_finite;
          continue;
        }
        if ((plot_.log_y && pt.y <= 0) || (!bar_ && plot_.log_x && pt.x <= 0)) {
          ++non_positive;
          continue;
        }
        if (stacked_ && pt.y < 0) {
          ++negative;
          continue;
        }
        ++marks;
        idx.back() = bar_ ? cats_.Add(pt, p) : 0;
        if (stacked_) continue;  // the stacks' tops join the range below
        yr_.Add(pt.y);
        if (bar_) continue;
        xr_.Add(pt.x);
        if (Plottable(pt.size) && pt.size > 0) max_size_ = std::max(max_size_, pt.size);
      }
      index_.push_back(std::move(idx));
    }
    for (size_t k = 0; stacked_ && k < cats_.names().size(); ++k) {
      double total = 0;
      for (size_t s = 0; s < plot_.series.size(); ++s) {
        total += cats_.Value(k, s);
        if (cats_.Value(k, s) > 0) yr_.Add(total);
      }
    }
    if (stacked_ && yr_.Empty()) yr_.Add(0);  // all zero: an empty frame from 0
    if (non_finite > 0) {
      notes_.push_back(Plural(non_finite, "non-finite point", "non-finite points") + " skipped");
    }
    if (non_positive > 0) {
      notes_.push_back(Plural(non_positive, "point", "points") +
                       " with a non-positive value skipped on the log axis");
    }
    if (negative > 0) {
      notes_.push_back(Plural(negative, "negative value", "negative values") +
                       " skipped: stacks add up values of 0 and more");
    }
    CollectLines(marks);
    return marks;
  }

  // Reference lines must stay inside the frame: the cap joins the y range, a roofline's
  // ridge point and a vertical line's x join the x range so the knee is visible.
  void CollectLines(long marks) {
    for (const PlotLine& l : plot_.lines) {
      const bool sloped = l.slope.has_value(), vertical = l.x.has_value();
      const char* why = nullptr;
      if (vertical) {
        if (!Plottable(*l.x))
          why = "is not finite";
        else if (bar_)
          why = "is vertical, which a bar chart has no x axis for";
        else if (plot_.log_x && *l.x <= 0)
          why = "is not positive on the log axis";
      } else if (!Plottable(l.cap) || (sloped && !Plottable(*l.slope))) {
        why = "is not finite";
      } else if (plot_.log_y && l.cap <= 0) {
        why = "is not positive on the log axis";
      } else if (sloped && *l.slope <= 0) {
        why = "has a non-positive slope";
      } else if (sloped && bar_) {
        why = "is sloped, which a bar chart has no x axis for";
      }
      if (why != nullptr) {
        notes_.push_back("reference line \"" + l.name + "\" not drawn: it " + why);
        continue;
      }
      lines_.push_back(&l);
      if (marks == 0) continue;
      if (vertical) {
        xr_.Add(*l.x);
        continue;
      }
      yr_.Add(l.cap);
      if (sloped) xr_.Add(l.cap / *l.slope);
    }
  }

  // Text widths are estimated: a renderer-free SVG cannot measure glyphs.
  void Layout() {
    const bool name_series = stacked_ || plot_.series.size() > 1 ||
                             (!bar_ && !plot_.series[0].name.empty());
    for (size_t s = 0; name_series && s < plot_.series.size(); ++s) {
      const std::string& n = plot_.series[s].name;
      legend_.push_back({n.empty() ? absl::StrFormat("series %d", s + 1) : n,
                         SeriesColor(plot_.series[s], s), "",
                         bar_                       ? Swatch::kBox
                         : Connect(plot_.series[s]) ? Swatch::kSolid
                                                    : Swatch::kDot});
    }
    for (size_t i = 0; i < lines_.size(); ++i) {
      legend_.push_back({lines_[i]->name.empty() ? "reference" : lines_[i]->name,
                         kLineColors[i % kLineStyles], kLineDashes[i % kLineStyles],
                         Swatch::kDashed});
    }
    if (!bar_) xa_ = plot_.log_x ? LogAxis(xr_) : LinearAxis(xr_, false);
    ya_ = plot_.log_y ? LogAxis(yr_) : LinearAxis(yr_, bar_);
    size_t ytick_chars = 1;
    for (const Tick& t : ya_.ticks) ytick_chars = std::max(ytick_chars, Utf8CodePoints(t.label));
    // Bar categories: every k-th label when they would overlap, rotated when they are wide.
    size_t cat_chars = 0;
    for (const std::string& n : cats_.names()) {
      cat_chars = std::max(cat_chars, Utf8CodePoints(Truncate(n, kMaxCategoryChars)));
    }
    const double right = 24;
    const size_t n_cats = std::max<size_t>(1, cats_.names().size());
    x0_ = 30 + ytick_chars * kCharWidth + 10;
    rotate_ = bar_ && cat_chars * kCharWidth > (w_ - x0_ - right) / n_cats * 0.9;
    if (rotate_) {
      // The first rotated label reaches down-left from its bar; keep it inside the frame.
      const double reach = cat_chars * kCharWidth * 0.71 + 6;
      for (int pass = 0; pass < 2; ++pass) {
        x0_ = std::max(x0_, std::min(w_ / 3, reach - (w_ - x0_ - right) / n_cats / 2));
      }
    }
    x1_ = w_ - right;
    const double per_label = rotate_ ? 13.0 : cat_chars * kCharWidth + 8;
    double x = x0_;
    int rows = legend_.empty() ? 0 : 1;
    for (const LegendItem& it : legend_) {
      const double w = 28 + Utf8CodePoints(Truncate(it.name, 40)) * kCharWidth + 16;
      if (x + w > x1_ && x > x0_) {
        x = x0_;
        ++rows;
      }
      legend_pos_.push_back({x, rows - 1});
      x += w;
    }
    tick_area_ = rotate_ ? 14 + cat_chars * kCharWidth * 0.72 : 20;
    y0_ = 34 + rows * 16 + 10;
    y1_ = std::max(y0_ + 40, h_ - (tick_area_ + 22 + notes_.size() * 14 + 6));
    ya_.px_lo = y1_;
    ya_.px_hi = y0_;
    xa_.px_lo = x0_;
    xa_.px_hi = x1_;
    frame_ = {x0_, x1_, y0_, y1_, bar_ ? (x1_ - x0_) / n_cats : 0, rotate_,
              std::max<size_t>(1, static_cast<size_t>(std::ceil(n_cats * per_label / (x1_ - x0_))))};
  }

  void DrawLegend() {
    for (size_t i = 0; i < legend_.size(); ++i) {
      const auto [lx, row] = legend_pos_[i];
      const double ly = 34 + row * 16;
      const LegendItem& it = legend_[i];
      const std::string color = XmlEscape(it.color);
      if (it.swatch == Swatch::kDashed || it.swatch == Swatch::kSolid) {
        c_.Line(lx, ly, lx + 22, ly,
                absl::StrFormat(
                    " stroke=\"%s\" stroke-width=\"2\"%s", color,
                    it.swatch == Swatch::kDashed ? " stroke-dasharray=\"" + it.dash + "\"" : ""));
      }
      if (it.swatch == Swatch::kDot || it.swatch == Swatch::kSolid) {
        absl::StrAppendFormat(&c_.out, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\"/>\n",
                              Px(lx + 11), Px(ly), it.swatch == Swatch::kDot ? "4.5" : "3",
                              color);
      }
      if (it.swatch == Swatch::kBox) {
        absl::StrAppendFormat(&c_.out,
                              "<rect x=\"%s\" y=\"%s\" width=\"14\" height=\"10\" fill=\"%s\"/>\n",
                              Px(lx + 4), Px(ly - 5), color);
      }
      c_.Text(lx + 28, ly + 4, Truncate(it.name, 40), " class=\"legend\"");
    }
  }

  void DrawAxes() {
    for (const Tick& t : ya_.ticks) {
      const double py = ya_.Map(t.value);
      if (py < y0_ - 0.5 || py > y1_ + 0.5) continue;
      if (!t.label.empty()) {
        c_.Line(x0_, py, x1_, py, " class=\"grid\" stroke=\"#e6e6e6\"");
        c_.Text(x0_ - 6, py + 4, t.label, " text-anchor=\"end\" fill=\"#333333\"");
      }
      c_.Line(x0_ - (t.label.empty() ? 3 : 5), py, x0_, py, " stroke=\"#555555\"");
    }
    for (const Tick& t : xa_.ticks) {
      if (bar_) break;
      const double px = xa_.Map(t.value);
      if (px < x0_ - 0.5 || px > x1_ + 0.5) continue;
      if (!t.label.empty()) {
        c_.Line(px, y0_, px, y1_, " class=\"grid\" stroke=\"#e6e6e6\"");
        c_.Text(px, y1_ + 17, t.label, " text-anchor=\"middle\" fill=\"#333333\"");
      }
      c_.Line(px, y1_, px, y1_ + (t.label.empty() ? 3 : 5), " stroke=\"#555555\"");
    }
    c_.Line(x0_, y0_, x0_, y1_, " class=\"axis\" stroke=\"#555555\"");
    c_.Line(x0_, y1_, x1_, y1_, " class=\"axis\" stroke=\"#555555\"");
    const double ym = (y0_ + y1_) / 2;
    c_.Text(14, ym, plot_.y_label + (plot_.log_y ? " (log)" : ""),
            absl::StrFormat(
                " class=\"axis-label\" text-anchor=\"middle\" transform=\"rotate(-90 14 %s)\"",
                Px(ym)));
    c_.Text((x0_ + x1_) / 2, y1_ + tick_area_ + 16,
            plot_.x_label + (!bar_ && plot_.log_x ? " (log)" : ""),
            " class=\"axis-label\" text-anchor=\"middle\"");
    for (size_t i = 0; i < notes_.size(); ++i) {
      c_.Text(8, h_ - 8 - (notes_.size() - 1 - i) * 14, notes_[i],
              " class=\"note\" fill=\"#666666\"");
    }
  }

  double Radius(const PlotPoint& pt, bool connect) const {
    if (max_size_ > 0 && Plottable(pt.size) && pt.size > 0) {
      return std::max(kMinRadius, kMaxRadius * std::sqrt(pt.size / max_size_));
    }
    return connect ? 3 : 4.5;
  }

  // Series lines first, then every marker on top of them; sized markers largest first,
  // so a small bubble is never hidden under a big one.
  void DrawPoints() {
    const std::string xl = plot_.x_label.empty() ? "x" : plot_.x_label;
    const std::string yl = plot_.y_label.empty() ? "y" : plot_.y_label;
    struct Marker {
      size_t s, p;
      double r;
    };
    std::vector<Marker> markers;
    for (size_t s = 0; s < plot_.series.size(); ++s) {
      const PlotSeries& ser = plot_.series[s];
      std::string pts;
      for (size_t p = 0; p < ser.points.size(); ++p) {
        if (index_[s][p] < 0) continue;
        markers.push_back({s, p, Radius(ser.points[p], Connect(ser))});
        absl::StrAppend(&pts, pts.empty() ? "" : " ", Px(xa_.Map(ser.points[p].x)), ",",
                        Px(ya_.Map(ser.points[p].y)));
      }
      if (!Connect(ser)) continue;
      absl::StrAppendFormat(&c_.out,
                            "<polyline class=\"series-line\" points=\"%s\" fill=\"none\" "
                            "stroke=\"%s\" stroke-width=\"2\"/>\n",
                            pts, XmlEscape(SeriesColor(ser, s)));
    }
    if (max_size_ > 0) {
      std::stable_sort(markers.begin(), markers.end(),
                       [](const Marker& a, const Marker& b) { return a.r > b.r; });
    }
    for (const Marker& m : markers) {
      const PlotSeries& ser = plot_.series[m.s];
      const PlotPoint& pt = ser.points[m.p];
      const bool connect = Connect(ser);
      const std::string& who = pt.label.empty() ? ser.name : pt.label;
      std::string tip = absl::StrFormat("%s%s%s = %s, %s = %s", who, who.empty() ? "" : ": ", xl,
                                        FormatPlotValue(pt.x), yl, FormatPlotValue(pt.y));
      if (max_size_ > 0 && Plottable(pt.size) && pt.size > 0) {
        absl::StrAppend(&tip, ", size = ", FormatPlotValue(pt.size));
      }
      absl::StrAppendFormat(
          &c_.out,
          "<g class=\"pt\"%s><circle class=\"mark\" cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\" "
          "fill-opacity=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.8\"><title>%s</title>"
          "</circle></g>\n",
          DataAttrs(ser.name, pt.label), Px(xa_.Map(pt.x)), Px(ya_.Map(pt.y)), Px(m.r),
          XmlEscape(SeriesColor(ser, m.s)),
          connect ? "1" : max_size_ > 0 ? "0.65" : "0.8", XmlEscape(tip));
    }
  }

  // Reference lines, clipped by construction (no clipPath ids to collide in one page).
  void DrawLines() {
    std::vector<double> right_labels;  // y of the labels at the right edge, kept apart
    for (size_t i = 0; i < lines_.size(); ++i) {
      const PlotLine& l = *lines_[i];
      const char* color = kLineColors[i % kLineStyles];
      const char* dash = kLineDashes[i % kLineStyles];
      if (l.x.has_value()) {
        DrawVertical(l, color, dash);
        continue;
      }
      std::vector<std::pair<double, double>> pts;  // data units; x in [0, 1] on a bar chart
      const double xlo = bar_ ? 0 : xa_.DataLo(), xhi = bar_ ? 1 : xa_.DataHi();
      if (l.slope.has_value()) {
        const double slope = *l.slope, ridge = l.cap / slope;
        // The rising part enters through the bottom of the frame or its left edge.
        const double xs = std::max(xlo, ya_.DataLo() / slope), xe = std::min(xhi, ridge);
        if (xs < xe) {
          // Straight when both axes share a scale; sampled when only one of them is log.
          const int n = plot_.log_x == plot_.log_y ? 1 : 32;
          for (int j = 0; j <= n; ++j) {
            const double t = xa_.T(xs) + (xa_.T(xe) - xa_.T(xs)) * j / n;
            const double xv = xa_.log ? std::pow(10.0, t) : t;
            pts.push_back({xv, std::min(slope * xv, l.cap)});
          }
        }
        // The flat roof, from the ridge (or the left edge when the ridge lies left of it).
        if (ridge < xhi) {
          if (pts.empty()) pts.push_back({xlo, l.cap});
          pts.push_back({xhi, l.cap});
        }
      } else {
        pts = {{xlo, l.cap}, {xhi, l.cap}};
      }
      std::string s;
      for (const auto& [xv, yv] : pts) {
        const double px = bar_ ? x0_ + xv * (x1_ - x0_) : xa_.Map(xv);
        absl::StrAppend(&s, s.empty() ? "" : " ", Px(px), ",", Px(ya_.Map(yv)));
      }
      absl::StrAppendFormat(
          &c_.out,
          "<polyline class=\"ref-line\" points=\"%s\" fill=\"none\" stroke=\"%s\" "
          "stroke-width=\"1.8\" stroke-dasharray=\"%s\"><title>%s</title></polyline>\n",
          s, color, dash, XmlEscape(l.name));
      // Rooflines of several precisions have caps close together: their labels step up.
      double ly = ya_.Map(l.cap) - 5;
      for (bool moved = true; moved;) {
        moved = false;
        for (double y : right_labels) {
          if (std::fabs(y - ly) < 12) {
            ly = y - 12;
            moved = true;
          }
        }
      }
      right_labels.push_back(ly);
      c_.Text(x1_ - 4, ly, l.name,
              absl::StrFormat(" class=\"ref-label\" text-anchor=\"end\" fill=\"%s\"", color));
    }
  }

  // A vertical line (a ridge point) over the full height, labelled along its left side
  // reading upwards, so labels of neighbouring ridges never cross each other's lines.
  void DrawVertical(const PlotLine& l, const char* color, const char* dash) {
    const double px = xa_.Map(*l.x);
    absl::StrAppendFormat(
        &c_.out,
        "<line class=\"vline\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"%s\"><title>%s</title></line>\n",
        Px(px), Px(y0_), Px(px), Px(y1_), color, dash, XmlEscape(l.name));
    const double tx = px - 12 < x0_ ? px + 12 : px - 4, ty = y1_ - 6;
    c_.Text(tx, ty, Truncate(l.name, static_cast<size_t>((y1_ - y0_ - 12) / kCharWidth)),
            absl::StrFormat(" class=\"ref-label vline-label\" fill=\"%s\" "
                            "transform=\"rotate(-90 %s %s)\"",
                            color, Px(tx), Px(ty)));
  }

  const DocPlot& plot_;
  const double w_, h_;
  const bool stacked_, bar_;
  Canvas c_;
  std::vector<std::string> notes_;
  std::vector<const PlotLine*> lines_;
  Categories cats_;
  std::vector<std::vector<int>> index_;  // [series][point] → category (0 off bars), -1 skipped
  Range xr_, yr_;
  Axis xa_, ya_;
  BarFrame frame_;
  double max_size_ = 0;  // largest PlotPoint::size drawn; 0 = unsized markers
  std::vector<LegendItem> legend_;
  std::vector<std::pair<double, int>> legend_pos_;  // x and row of each legend item
  double x0_ = 0, x1_ = 0, y0_ = 0, y1_ = 0, tick_area_ = 20;
  bool rotate_ = false;
};

}  // namespace

std::string RenderSvgPlot(const DocPlot& plot, int width, int height) {
  return Plotter(plot, width, height).Render();
}

}  // namespace opmap::analysis
