// The report renderers (analysis/report/report_markdown.h, svg_plot.h, report_html.h) on
// small hand-built documents: exact output where the layout is the contract (Markdown
// tables), counted elements where it is not (SVG marks, ids).
#include <cmath>
#include <regex>
#include <string>

#include "analysis/report/document.h"
#include "analysis/report/report_html.h"
#include "analysis/report/report_markdown.h"
#include "analysis/report/svg_plot.h"
#include "gtest/gtest.h"
#include "tests/unit/report/svg_test_util.h"

namespace opmap::analysis {
namespace {

using testing_report::Count;
using testing_report::HasNonFinite;

PlotSeries Series(std::string name, std::vector<PlotPoint> points, bool connect = false) {
  return PlotSeries{std::move(name), std::move(points), connect};
}

TEST(MarkdownTest, TableAlignsNumericColumnsRightAndEscapesPipes) {
  ReportDocument doc;
  doc.title = "Handoff";
  doc.header = {{"model", "bert-base"}};
  DocSection sec;
  sec.heading = "Operators";
  sec.paragraphs = {"Top operators by GPU time."};
  DocTable t;
  t.columns = {"operator", "time ms"};
  t.align_right = {false, true};
  t.rows = {{"aten::addmm", "12.5"}, {"a|b", "3"}};
  t.notes = {"times are medians"};
  sec.tables.push_back(t);
  doc.sections.push_back(sec);
  EXPECT_EQ(RenderMarkdown(doc),
            "# Handoff\n\n"
            "- **model:** bert-base\n\n"
            "## Operators\n\n"
            "Top operators by GPU time.\n\n"
            "| operator    | time ms |\n"
            "| ----------- | ------: |\n"
            "| aten::addmm |    12.5 |\n"
            "| a\\|b        |       3 |\n\n"
            "times are medians\n");
}

TEST(MarkdownTest, EscapesMarkupButKeepsInnerUnderscores) {
  EXPECT_EQ(MarkdownEscape("layer_norm"), "layer_norm");
  EXPECT_EQ(MarkdownEscape("_private_"), "\\_private\\_");
  EXPECT_EQ(MarkdownEscape("gemm<float*, 4>"), "gemm\\<float\\*, 4\\>");
  // A line break or a control character cannot end a table row or reach a terminal:
  // shown escaped (common/text/printable.h), the backslash itself escaped for Markdown.
  EXPECT_EQ(MarkdownEscape("a\nb"), "a\\\\nb");
  EXPECT_EQ(MarkdownEscape("\x1b]0;x\x07"), "\\\\x1b\\]0;x\\\\x07");
  ReportDocument doc;
  doc.sections.push_back({"S", {"# not a heading", "- not a list"}, {}, {}, {}});
  const std::string md = RenderMarkdown(doc);
  EXPECT_NE(md.find("\\# not a heading"), std::string::npos) << md;
  EXPECT_NE(md.find("\\- not a list"), std::string::npos) << md;
}

TEST(MarkdownTest, PlotBecomesPointerPlusAtMostTwentyRows) {
  DocPlot bar;
  bar.id = "plot-layer-time";
  bar.title = "Per-layer time";
  bar.x_label = "layer";
  bar.y_label = "ms";
  PlotSeries s;
  for (int i = 0; i < 25; ++i) s.points.push_back({0, 1.0 + i, "layer" + std::to_string(i)});
  bar.series.push_back(s);
  DocPlot gone;
  gone.title = "Roofline";
  gone.unavailable = "no FLOP counts";
  ReportDocument doc;
  doc.sections.push_back({"Plots", {}, {}, {}, {bar, gone}});
  const std::string md = RenderMarkdown(doc);
  EXPECT_NE(md.find("Plot: Per-layer time — in the HTML report\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| layer   |  ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("| layer19 |  20 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("layer20"), std::string::npos) << md;
  EXPECT_NE(md.find("5 more points in the HTML report."), std::string::npos) << md;
  EXPECT_NE(md.find("Plot: Roofline — unavailable: no FLOP counts"), std::string::npos) << md;
}

TEST(SvgTest, FormatsValuesShortly) {
  EXPECT_EQ(FormatPlotValue(0), "0");
  EXPECT_EQ(FormatPlotValue(12.5), "12.5");
  EXPECT_EQ(FormatPlotValue(1500), "1.5k");
  EXPECT_EQ(FormatPlotValue(989e12), "989T");
  EXPECT_EQ(FormatPlotValue(999.99), "1k");
  EXPECT_EQ(FormatPlotValue(-2.5e6), "-2.5M");
  EXPECT_EQ(FormatPlotValue(0.125), "0.125");
}

TEST(SvgTest, CountsOneMarkPerDrawnPoint) {
  DocPlot p;
  p.id = "plot-x";
  p.title = "Latency";
  p.kind = PlotKind::kLine;
  p.series = {Series("p50", {{0, 1, ""}, {1, 2, ""}, {2, 3, ""}}, true),
              Series("p99", {{0, 4, ""}, {1, 5, ""}}, true)};
  const std::string svg = RenderSvgPlot(p, 800, 400);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 5u) << svg;
  EXPECT_EQ(Count(svg, "class=\"series-line\""), 2u);
  EXPECT_EQ(Count(svg, "<svg "), 1u);
  EXPECT_NE(svg.find("id=\"plot-x\" class=\"opmap-plot\""), std::string::npos);
  EXPECT_NE(svg.find(">p99</text>"), std::string::npos) << "legend";

  DocPlot bar;
  bar.id = "plot-bar";
  bar.series = {Series("", {{0, 3, "attention"}, {0, 1, "mlp"}, {0, 2, "norm"}, {0, 0, "embed"}})};
  const std::string bsvg = RenderSvgPlot(bar, 800, 400);
  EXPECT_EQ(Count(bsvg, "class=\"mark\""), 4u) << bsvg;
  EXPECT_EQ(Count(bsvg, "<rect class=\"mark\""), 4u);
  EXPECT_NE(bsvg.find(">attention</text>"), std::string::npos) << "category label";
}

TEST(SvgTest, LogAxisSkipsNonPositiveAndNonFiniteValuesWithANote) {
  DocPlot p;
  p.id = "plot-roof";
  p.kind = PlotKind::kScatter;
  p.log_x = p.log_y = true;
  p.series = {Series("ops", {{1, 10, "a"},
                             {100, 1e4, "b"},
                             {0, 5, "zero x"},
                             {10, -1, "negative y"},
                             {std::nan(""), 1, "nan"},
                             {1, INFINITY, "inf"}})};
  const std::string svg = RenderSvgPlot(p, 800, 400);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 2u) << svg;
  EXPECT_NE(svg.find("2 points with a non-positive value skipped on the log axis"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("2 non-finite points skipped"), std::string::npos) << svg;
  EXPECT_FALSE(HasNonFinite(svg)) << svg;
  // Decade ticks: 1 .. 10k on y.
  EXPECT_NE(svg.find(">10k</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("(log)"), std::string::npos);
}

TEST(SvgTest, RooflineIsTwoSegmentsInLogLogAndSlaIsHorizontal) {
  DocPlot p;
  p.id = "plot-roof";
  p.kind = PlotKind::kScatter;
  p.log_x = p.log_y = true;
  p.series = {Series("ops", {{0.5, 1e11, "gemv"}, {300, 6e14, "gemm"}})};
  p.lines = {{"H100 roofline", 3.35e12, 989e12}, {"SLA", std::nullopt, 5e14}};
  const std::string svg = RenderSvgPlot(p, 800, 400);
  const std::regex poly("<polyline class=\"ref-line\" points=\"([^\"]*)\"");
  std::vector<std::string> points;
  for (std::sregex_iterator it(svg.begin(), svg.end(), poly), end; it != end; ++it) {
    points.push_back((*it)[1]);
  }
  ASSERT_EQ(points.size(), 2u) << svg;
  EXPECT_EQ(Count(points[0], ","), 3u) << "roofline: start, ridge, end: " << points[0];
  EXPECT_EQ(Count(points[1], ","), 2u) << points[1];
  EXPECT_NE(svg.find(">H100 roofline</text>"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 2u);
  EXPECT_FALSE(HasNonFinite(svg)) << svg;

  // A sloped line cannot be drawn on a bar chart; it is said, not silently dropped.
  DocPlot bar;
  bar.series = {Series("", {{0, 1, "a"}})};
  bar.lines = {{"roof", 2.0, 3.0}};
  EXPECT_NE(RenderSvgPlot(bar, 600, 300).find("reference line &quot;roof&quot; not drawn"),
            std::string::npos);
}

TEST(SvgTest, EscapesAllText) {
  DocPlot p;
  p.id = "plot-\"x\"";
  p.title = "a < b & \"c\"";
  p.kind = PlotKind::kScatter;
  p.x_label = "<x>";
  p.series = {Series("s&s", {{1, 2, "<script>alert('x')</script>"}})};
  p.lines = {{"SLA <1ms>", std::nullopt, 1}};
  const std::string svg = RenderSvgPlot(p, 600, 300);
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("a < b"), std::string::npos);
  EXPECT_EQ(svg.find("s&s"), std::string::npos);
  EXPECT_NE(svg.find("a &lt; b &amp; &quot;c&quot;"), std::string::npos) << svg;
  EXPECT_NE(svg.find("id=\"plot-&quot;x&quot;\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("SLA &lt;1ms&gt;"), std::string::npos);
}

TEST(SvgTest, UnavailableAndEmptyPlotsSayWhy) {
  DocPlot p;
  p.id = "plot-gone";
  p.title = "Roofline";
  p.unavailable = "no FLOP counts in this trace";
  std::string svg = RenderSvgPlot(p, 600, 300);
  EXPECT_NE(svg.find("Unavailable: no FLOP counts in this trace"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 0u);
  p.unavailable.clear();
  p.log_y = true;
  p.series = {Series("", {{0, 0, "a"}})};
  svg = RenderSvgPlot(p, 600, 300);
  EXPECT_NE(svg.find("Unavailable: no plottable points"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1 point with a non-positive value"), std::string::npos) << svg;
}

TEST(SvgTest, ManyBarCategoriesGetRotatedLabels) {
  DocPlot p;
  p.id = "plot-layers";
  PlotSeries s;
  for (int i = 0; i < 48; ++i) {
    s.points.push_back({0, 1.0 + i % 7, "encoder.layer." + std::to_string(i) + ".attention"});
  }
  p.series = {s};
  const std::string svg = RenderSvgPlot(p, 1100, 520);
  EXPECT_EQ(Count(svg, "class=\"mark\""), 48u);
  EXPECT_NE(svg.find("rotate(-45"), std::string::npos);
  EXPECT_FALSE(HasNonFinite(svg));
}

TEST(HtmlTest, SelfContainedPageWithEveryPlotIdOnce) {
  ReportDocument doc;
  doc.title = "Release <check> & more";
  doc.header = {{"baseline", "v1.2"}, {"candidate", "v1.3"}};
  DocSection a;
  a.heading = "Latency";
  a.paragraphs = {"p99 regressed by 4% <within> noise."};
  a.facts = {{"verdict", "ship"}};
  DocTable t;
  t.columns = {"op", "ms"};
  t.align_right = {false, true};
  t.rows = {{"aten::mm", "1.5"}};
  a.tables = {t};
  DocPlot line;
  line.id = "plot-latency";
  line.kind = PlotKind::kLine;
  line.series = {Series("p99", {{0, 1, ""}, {1, std::nan(""), ""}, {2, 3, ""}}, true)};
  DocPlot dup = line;  // a repeated id must not produce two elements with one id
  DocPlot gone;
  gone.id = "plot-roofline";
  gone.unavailable = "no FLOPs";
  a.plots = {line, dup, gone};
  doc.sections = {a, {"Empty", {}, {}, {}, {}}};
  const std::string html = RenderHtml(doc);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_EQ(Count(html, "id=\"plot-latency\""), 1u);
  EXPECT_EQ(Count(html, "id=\"plot-latency-2\""), 1u);
  EXPECT_EQ(Count(html, "id=\"plot-roofline\""), 1u);
  EXPECT_EQ(Count(html, "href=\"#plot-latency\""), 1u) << "table of contents";
  EXPECT_EQ(Count(html, "id=\"section-"), 2u);
  EXPECT_NE(html.find("<td class=\"num\">1.5</td>"), std::string::npos);
  EXPECT_NE(html.find("Release &lt;check&gt; &amp; more"), std::string::npos);
  EXPECT_NE(html.find("&lt;within&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://", 0), html.find("http://www.w3.org/2000/svg"))
      << "the only URL is the SVG namespace";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_FALSE(HasNonFinite(html));
  EXPECT_EQ(Count(html, "<svg "), Count(html, "</svg>"));
  EXPECT_EQ(Count(html, "<section "), Count(html, "</section>"));
  EXPECT_EQ(Count(html, "<table>"), Count(html, "</table>"));
  EXPECT_EQ(Count(html, "class=\"mark\""), 4u);
}

}  // namespace
}  // namespace opmap::analysis
