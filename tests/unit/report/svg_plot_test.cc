// svg_plot.h's richer plot model: sized and coloured scatter markers, per-point tooltips and
// data attributes, vertical reference lines (roofline ridges), and stacked bars. Elements are
// found by their stable attributes (class="pt"/"seg"/"vline", data-series, data-label), not
// by position in the output.
#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "analysis/report/document.h"
#include "analysis/report/svg_plot.h"
#include "gtest/gtest.h"
#include "tests/unit/report/svg_test_util.h"

namespace opmap::analysis {
namespace {

using testing_report::Count;
using testing_report::HasNonFinite;

// One drawn element (a <g class="pt|seg"> and its mark) by label.
struct Element {
  std::string series, label, fill, title;
  double r = 0, y = 0, height = 0;
};

std::vector<Element> Elements(const std::string& svg, const std::string& cls) {
  const std::regex re("<g class=\"" + cls +
                      "\" data-series=\"([^\"]*)\" data-label=\"([^\"]*)\">(.*?)</g>");
  const std::regex attr("(\\br|\\by|height|fill)=\"([^\"]*)\"");
  const std::regex title("<title>([^<]*)</title>");
  std::vector<Element> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    Element e;
    e.series = (*it)[1];
    e.label = (*it)[2];
    const std::string body = (*it)[3];
    for (std::sregex_iterator a(body.begin(), body.end(), attr); a != end; ++a) {
      const std::string k = (*a)[1], v = (*a)[2];
      if (k == "r") e.r = std::stod(v);
      if (k == "y") e.y = std::stod(v);
      if (k == "height") e.height = std::stod(v);
      if (k == "fill") e.fill = v;
    }
    std::smatch m;
    if (std::regex_search(body, m, title)) e.title = m[1];
    out.push_back(e);
  }
  return out;
}

std::map<std::string, Element> ByLabel(const std::vector<Element>& v) {
  std::map<std::string, Element> out;
  for (const Element& e : v) out[e.label] = e;
  return out;
}

DocPlot Bubbles(bool log) {
  DocPlot p;
  p.id = "plot-bubbles";
  p.kind = PlotKind::kScatter;
  p.x_label = "FLOP / byte";
  p.y_label = "FLOP/s";
  p.log_x = p.log_y = log;
  PlotSeries gemm{"matmul", {{10, 1e12, "aten::mm", 100}, {300, 5e14, "aten::addmm", 1}}, false,
                  "#d62728"};
  PlotSeries misc{"elementwise", {{0.25, 1e10, "aten::add <fused>", 25}, {1, 3e10, "", 0}}};
  p.series = {gemm, misc};
  return p;
}

TEST(SvgPlotTest, SizedColouredScatterMarkersWithTooltips) {
  const std::string svg = RenderSvgPlot(Bubbles(false), 900, 420);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 4u) << svg;
  const std::vector<Element> pts = Elements(svg, "pt");
  ASSERT_EQ(pts.size(), 4u) << svg;
  auto by = ByLabel(pts);
  // Area ∝ size: 100 vs 1 is a radius ratio of 10 (18 px vs the 2.5 px floor here).
  EXPECT_NEAR(by["aten::mm"].r, 18, 0.1);
  EXPECT_NEAR(by["aten::addmm"].r, 2.5, 0.1);
  EXPECT_NEAR(by["aten::add &lt;fused&gt;"].r, 9, 0.1) << "sqrt(25/100)·18";
  EXPECT_NEAR(by[""].r, 4.5, 0.01) << "size 0 keeps the default marker";
  EXPECT_GT(by["aten::mm"].r, by["aten::addmm"].r);
  // Colours: the series' own, else the palette by series index; both in the legend.
  EXPECT_EQ(by["aten::mm"].fill, "#d62728");
  EXPECT_EQ(by["aten::mm"].series, "matmul");
  EXPECT_EQ(by[""].fill, "#f28e2b");
  EXPECT_EQ(by[""].series, "elementwise");
  EXPECT_NE(svg.find("fill=\"#d62728\"/>\n<text"), std::string::npos) << "legend swatch";
  EXPECT_NE(svg.find(">matmul</text>"), std::string::npos);
  EXPECT_NE(svg.find(">elementwise</text>"), std::string::npos);
  // Every point has its tooltip, labels escaped; a point without label names its series.
  EXPECT_EQ(by["aten::mm"].title, "aten::mm: FLOP / byte = 10, FLOP/s = 1T, size = 100");
  EXPECT_EQ(by["aten::add &lt;fused&gt;"].title.rfind("aten::add &lt;fused&gt;: ", 0), 0u);
  EXPECT_EQ(by[""].title, "elementwise: FLOP / byte = 1, FLOP/s = 30G");
  EXPECT_EQ(svg.find("<fused>"), std::string::npos);
  // Largest first, so the small bubbles are drawn over it.
  EXPECT_LT(svg.find("data-label=\"aten::mm\""), svg.find("data-label=\"aten::addmm\""));
}

TEST(SvgPlotTest, LogAxesStillWorkWithSizes) {
  DocPlot p = Bubbles(true);
  p.series[1].points.push_back({0, 5, "zero x", 50});  // dropped on log x, said in a note
  const std::string svg = RenderSvgPlot(p, 900, 420);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 4u) << svg;
  auto by = ByLabel(Elements(svg, "pt"));
  EXPECT_NEAR(by["aten::mm"].r, 18, 0.1);
  EXPECT_GT(by["aten::mm"].r, by["aten::add &lt;fused&gt;"].r);
  EXPECT_NE(svg.find("1 point with a non-positive value skipped on the log axis"),
            std::string::npos);
  EXPECT_NE(svg.find("(log)"), std::string::npos);
  EXPECT_FALSE(HasNonFinite(svg)) << svg;
  // Non-finite or negative sizes are not sizes: default marker, no nan radius.
  DocPlot q = Bubbles(true);
  q.series[0].points[1].size = std::nan("");
  q.series[1].points[0].size = -3;
  const std::string qsvg = RenderSvgPlot(q, 900, 420);
  auto qb = ByLabel(Elements(qsvg, "pt"));
  EXPECT_NEAR(qb["aten::addmm"].r, 4.5, 0.01);
  EXPECT_NEAR(qb["aten::add &lt;fused&gt;"].r, 4.5, 0.01);
  EXPECT_FALSE(HasNonFinite(qsvg)) << qsvg;
}

TEST(SvgPlotTest, UnsafeColourFallsBackToThePalette) {
  DocPlot p = Bubbles(false);
  p.series[0].color = "red\"/><script>x</script>";
  const std::string svg = RenderSvgPlot(p, 900, 420);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(ByLabel(Elements(svg, "pt"))["aten::mm"].fill, "#4e79a7");
}

TEST(SvgPlotTest, RooflinesPerPrecisionWithVerticalRidgeLines) {
  DocPlot p = Bubbles(true);
  PlotLine bf16{"H100 bf16 roofline", 3.35e12, 989e12};
  PlotLine fp32{"H100 tf32 roofline", 3.35e12, 494e12};
  PlotLine ridge_bf16{"ridge bf16 295 FLOP/B", std::nullopt, 0, 295.2};
  PlotLine ridge_tf32{"ridge tf32 147 FLOP/B", std::nullopt, 0, 147.5};
  p.lines = {bf16, fp32, ridge_bf16, ridge_tf32};
  const std::string svg = RenderSvgPlot(p, 900, 420);
  EXPECT_EQ(Count(svg, "<polyline class=\"ref-line\""), 2u) << svg;
  EXPECT_EQ(Count(svg, "class=\"vline\""), 2u) << svg;
  EXPECT_NE(svg.find(">ridge bf16 295 FLOP/B</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">ridge tf32 147 FLOP/B</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>ridge bf16 295 FLOP/B</title></line>"), std::string::npos);
  // Each reference line its own colour: four lines, four stroke colours.
  const std::regex stroke("class=\"(ref-line|vline)\"[^>]*stroke=\"(#[0-9a-f]{6})\"");
  std::map<std::string, int> colors;
  for (std::sregex_iterator it(svg.begin(), svg.end(), stroke), end; it != end; ++it) {
    ++colors[(*it)[2]];
  }
  EXPECT_EQ(colors.size(), 4u) << svg;
  // The vertical line spans the plot at the ridge's x: x1 == x2.
  const std::regex vline("class=\"vline\" x1=\"([^\"]*)\" y1=\"[^\"]*\" x2=\"([^\"]*)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, vline));
  EXPECT_EQ(m[1], m[2]);
  // Horizontal and sloped lines keep their legend entries and labels.
  EXPECT_NE(svg.find(">H100 bf16 roofline</text>"), std::string::npos);
  EXPECT_NE(svg.find(">H100 tf32 roofline</text>"), std::string::npos);
  EXPECT_FALSE(HasNonFinite(svg)) << svg;

  // A vertical line outside the log axis' domain, or on a bar chart, is said, not dropped.
  p.lines = {{"bad ridge", std::nullopt, 0, -1.0}};
  EXPECT_NE(RenderSvgPlot(p, 600, 300).find("reference line &quot;bad ridge&quot; not drawn"),
            std::string::npos);
  DocPlot bar;
  bar.series = {{"", {{0, 1, "a"}}}};
  bar.lines = {{"ridge", std::nullopt, 0, 2.0}};
  EXPECT_NE(RenderSvgPlot(bar, 600, 300).find("it is vertical, which a bar chart has no x axis"),
            std::string::npos);
}

DocPlot Shares() {
  DocPlot p;
  p.id = "plot-bottleneck-share";
  p.title = "GPU time share by bottleneck class per layer type";
  p.kind = PlotKind::kStackedBar;
  p.x_label = "layer type";
  p.y_label = "share of GPU time";
  p.series = {{"compute-bound", {{0, 0.6, "attention"}, {0, 0.1, "mlp"}}, false, "#1b9e77"},
              {"memory-bound", {{0, 0.3, "mlp"}, {0, 0.1, "attention"}}},
              {"launch-bound", {{0, 0.3, "attention"}, {0, 0.6, "mlp"}}}};
  return p;
}

TEST(SvgPlotTest, StackedBarsOneSegmentPerCategoryAndSeries) {
  const std::string svg = RenderSvgPlot(Shares(), 900, 420);
  const std::vector<Element> segs = Elements(svg, "seg");
  ASSERT_EQ(segs.size(), 6u) << svg;
  EXPECT_EQ(Count(svg, "class=\"mark\""), 6u);
  std::map<std::string, Element> by;  // "category/series"
  for (const Element& e : segs) by[e.label + "/" + e.series] = e;
  // Categories in first-seen order: attention first.
  EXPECT_LT(svg.find(">attention</text>"), svg.find(">mlp</text>"));
  // Heights proportional to values (both stacks total 1.0, same scale).
  const double unit = by["attention/compute-bound"].height / 0.6;
  EXPECT_GT(unit, 50);
  EXPECT_NEAR(by["attention/memory-bound"].height, 0.1 * unit, 0.2);
  EXPECT_NEAR(by["attention/launch-bound"].height, 0.3 * unit, 0.2);
  EXPECT_NEAR(by["mlp/compute-bound"].height, 0.1 * unit, 0.2);
  EXPECT_NEAR(by["mlp/memory-bound"].height, 0.3 * unit, 0.2);
  EXPECT_NEAR(by["mlp/launch-bound"].height, 0.6 * unit, 0.2);
  // Bottom-up in series order: each layer sits on the one before it.
  for (const char* cat : {"attention", "mlp"}) {
    const std::string k = cat;
    const Element &a = by[k + "/compute-bound"], &b = by[k + "/memory-bound"],
                  &c = by[k + "/launch-bound"];
    EXPECT_NEAR(b.y + b.height, a.y, 0.15) << cat;
    EXPECT_NEAR(c.y + c.height, b.y, 0.15) << cat;
  }
  // Colours: own, else palette by series index; the legend names every series.
  EXPECT_EQ(by["mlp/compute-bound"].fill, "#1b9e77");
  EXPECT_EQ(by["mlp/memory-bound"].fill, "#f28e2b");
  EXPECT_EQ(by["mlp/launch-bound"].fill, "#59a14f");
  for (const char* s : {"compute-bound", "memory-bound", "launch-bound"}) {
    EXPECT_NE(svg.find(std::string(">") + s + "</text>"), std::string::npos) << s;
  }
  // Tooltip "category · series: value".
  EXPECT_EQ(by["attention/memory-bound"].title, "attention \xC2\xB7 memory-bound: 0.1");
  EXPECT_NE(svg.find(">1</text>"), std::string::npos) << "y axis to the total" << svg;
  EXPECT_FALSE(HasNonFinite(svg));
}

TEST(SvgPlotTest, StackedBarsSumRepeatsAndSkipMissingZeroAndNegative) {
  DocPlot p;
  p.id = "plot-ms";
  p.kind = PlotKind::kStackedBar;
  p.series = {{"a", {{0, 2, "x"}, {0, 3, "x"}, {0, 4, "y"}}},
              {"b", {{0, 1, "z"}, {0, 0, "x"}, {0, -1, "y"}, {0, std::nan(""), "y"}}}};
  const std::string svg = RenderSvgPlot(p, 700, 360);
  const std::vector<Element> segs = Elements(svg, "seg");
  ASSERT_EQ(segs.size(), 3u) << svg;  // x·a = 5, y·a = 4, z·b = 1
  std::map<std::string, Element> by;
  for (const Element& e : segs) by[e.label + "/" + e.series] = e;
  EXPECT_EQ(by["x/a"].title, "x \xC2\xB7 a: 5");
  EXPECT_NEAR(by["x/a"].height / by["z/b"].height, 5, 0.05);
  EXPECT_NE(svg.find("1 negative value skipped"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1 non-finite point skipped"), std::string::npos) << svg;
  EXPECT_FALSE(HasNonFinite(svg));
}

TEST(SvgPlotTest, StackedBarsOnALogAxis) {
  DocPlot p = Shares();
  p.log_y = true;
  const std::string svg = RenderSvgPlot(p, 900, 420);
  EXPECT_EQ(Elements(svg, "seg").size(), 6u) << svg;
  EXPECT_FALSE(HasNonFinite(svg)) << svg;
}

}  // namespace
}  // namespace opmap::analysis
