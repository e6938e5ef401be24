// The HTML report (analysis/report/report_html.h) in a real browser: headless Debian
// Chromium renders a sample report with the four plots our reports carry, once to a PNG
// screenshot and once to its parsed DOM. The screenshot must be a 1280 px wide, non-blank
// image that shows the plot colours; the DOM must hold every plot's <svg> with as many
// marks as the data has drawable points, i.e. the browser parsed what we wrote.
//
// Chromium is a test dependency (scripts/setup.sh installs it). Missing, the test fails;
// OPMAP_NO_CHROMIUM=1 turns that into a skip for machines that knowingly lack it.
// OPMAP_REPORT_ARTIFACTS=<dir> keeps report.html and report.png there for a human to look at.
#include <sys/stat.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/report/document.h"
#include "analysis/report/report_html.h"
#include "gtest/gtest.h"
#include "tests/testing/chromium.h"
#include "tests/testing/run_process.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {


DocSection Section(const std::string& heading) {
  DocSection s;
  s.heading = heading;
  return s;
}

DocPlot Plot(const std::string& id, const std::string& title, PlotKind kind,
             const std::string& x_label, const std::string& y_label) {
  DocPlot p;
  p.id = id;
  p.title = title;
  p.kind = kind;
  p.x_label = x_label;
  p.y_label = y_label;
  return p;
}

// The four plots, with the drawable-mark count each must show in the DOM.
ReportDocument SampleReport(std::map<std::string, size_t>* marks) {
  ReportDocument doc;
  doc.title = "opmap handoff — bert-base on H100 (sample)";
  doc.header = {{"trace", "bert_base_h100.json.gz"}, {"GPU", "NVIDIA H100 80GB HBM3"}};

  DocSection layers = Section("Where the time goes");
  layers.paragraphs = {"GPU time per layer, summed over 50 iterations."};
  DocPlot bar = Plot("plot-layer-time", "Per-layer time", PlotKind::kBar, "layer", "GPU time (ms)");
  PlotSeries per_layer;
  for (int i = 0; i < 24; ++i) {
    per_layer.points.push_back(
        {0, 4.0 + 3.0 * std::sin(i * 0.7) + (i % 6 == 0 ? 6 : 0),
         "encoder.layer." + std::to_string(i / 2) + (i % 2 ? ".mlp" : ".attn")});
  }
  bar.series = {per_layer};
  (*marks)[bar.id] = 24;
  layers.plots.push_back(bar);

  DocSection roof = Section("Operator roofline");
  DocPlot scatter = Plot("plot-roofline", "Operator roofline", PlotKind::kScatter,
                         "arithmetic intensity (FLOP/byte)", "achieved FLOP/s");
  scatter.log_x = scatter.log_y = true;
  PlotSeries ops;
  ops.name = "operators";
  for (int i = 0; i < 40; ++i) {
    const double ai = std::pow(10.0, -1 + i * 0.1);
    ops.points.push_back({ai, std::min(3.35e12 * ai, 989e12) * (0.2 + 0.5 * ((i * 7) % 10) / 10.0),
                          "aten::op_" + std::to_string(i) + " <fp16>"});
  }
  ops.points.push_back({0, 1e12, "aten::copy_ (no FLOPs)"});  // skipped on the log x axis
  scatter.series = {ops};
  scatter.lines = {{"H100 roofline", 3.35e12, 989e12}};
  (*marks)[scatter.id] = 40;
  roof.plots.push_back(scatter);

  DocSection latency = Section("Latency");
  DocPlot line = Plot("plot-latency-time", "Latency percentiles over time", PlotKind::kLine,
                      "time (s)", "latency (ms)");
  const char* names[] = {"p50", "p95", "p99"};
  for (int s = 0; s < 3; ++s) {
    PlotSeries ser{names[s], {}, true};
    for (int i = 0; i < 30; ++i) {
      ser.points.push_back(
          {i * 10.0, 20.0 + s * 8 + 2 * std::sin(i * 0.5 + s) + (i > 20 ? 4 : 0), ""});
    }
    line.series.push_back(ser);
  }
  line.lines = {{"SLA 50 ms", std::nullopt, 50}};
  (*marks)[line.id] = 90;
  latency.plots.push_back(line);

  DocPlot lt = Plot("plot-latency-throughput", "Latency–throughput", PlotKind::kScatter,
                    "throughput (req/s)", "p99 latency (ms)");
  PlotSeries batch;
  batch.name = "batch size";
  for (int b = 1; b <= 12; ++b) {
    batch.points.push_back(
        {150.0 * b / (1 + b * 0.08), 18.0 + b * b * 0.6, "batch " + std::to_string(b)});
  }
  lt.series = {batch};
  (*marks)[lt.id] = 12;
  latency.plots.push_back(lt);
  doc.sections = {layers, roof, latency};
  return doc;
}

uint32_t Be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         static_cast<unsigned char>(s[at + 3]);
}

bool Fail(std::string* error, const char* why) {
  *error = why;
  return false;
}

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel
};

// Enough of PNG for Chromium's screenshots: 8-bit RGB or RGBA, not interlaced. The pixels
// are needed (not just the file size) to tell a drawn page from a blank or error page.
bool DecodePng(const std::string& png, Image* img, std::string* error) {
  if (png.size() < 33 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return Fail(error, "no PNG signature");
  if (png.compare(12, 4, "IHDR") != 0) return Fail(error, "first chunk is not IHDR");
  img->width = Be32(png, 16);
  img->height = Be32(png, 20);
  const int depth = png[24], color = png[25], interlace = png[28];
  if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
    return Fail(error, "unsupported PNG format (depth/color/interlace)");
  }
  const size_t bpp = color == 6 ? 4 : 3;
  std::string idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = Be32(png, at);
    if (at + 12 + len > png.size()) return Fail(error, "truncated chunk");
    if (png.compare(at + 4, 4, "IDAT") == 0) idat.append(png, at + 8, len);
    at += 12 + len;
  }
  const size_t stride = img->width * bpp;
  std::vector<uint8_t> raw(img->height * (stride + 1));
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size()) {
    return Fail(error, "IDAT does not inflate to the image size");
  }
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img->rgb.reserve(size_t{img->width} * img->height * 3);
  for (uint32_t y = 0; y < img->height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          return Fail(error, "bad filter type");
      }
      cur[i] = static_cast<uint8_t>(in[i] + pred);
    }
    for (uint32_t x = 0; x < img->width; ++x)
      img->rgb.insert(img->rgb.end(), &cur[x * bpp], &cur[x * bpp + 3]);
    prev.swap(cur);
  }
  return true;
}

size_t PixelsNear(const Image& img, int r, int g, int b) {
  size_t n = 0;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    n += std::abs(img.rgb[i] - r) <= 4 && std::abs(img.rgb[i + 1] - g) <= 4 &&
         std::abs(img.rgb[i + 2] - b) <= 4;
  }
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReportChromiumTest, BrowserRendersEveryPlot) {
  if (std::string missing = testing::ChromiumMissing(); !missing.empty()) {
    if (missing.rfind("skip: ", 0) == 0) GTEST_SKIP() << missing.substr(6);
    FAIL() << missing.substr(6);
  }
  const char* keep = std::getenv("OPMAP_REPORT_ARTIFACTS");
  std::string dir;
  if (keep != nullptr && *keep != '\0') {
    dir = keep;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    ASSERT_FALSE(ec) << dir << ": " << ec.message();
  } else {
    std::string tmpl = ::testing::TempDir() + "opmap_report_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  dir = std::filesystem::absolute(dir).string();
  std::map<std::string, size_t> marks;
  const std::string html_path = dir + "/report.html", png_path = dir + "/report.png";
  {
    std::ofstream out(html_path, std::ios::binary);
    out << RenderHtml(SampleReport(&marks));
    ASSERT_TRUE(out.good()) << html_path;
  }
  std::error_code ec;
  std::filesystem::remove(png_path, ec);  // a stale PNG from a kept run must not pass
  const auto r1 = testing::RunChromium(
      dir, {"--screenshot=" + png_path, "--window-size=1280,2000", "file://" + html_path});
  ASSERT_EQ(r1.exit_code, 0) << "chromium --screenshot (124 = timed out)\n" << r1.err;

  const std::string png = ReadFile(png_path);
  ASSERT_GT(png.size(), 33u) << png_path << " missing or empty\n" << r1.err;
  Image img;
  std::string error;
  ASSERT_TRUE(DecodePng(png, &img, &error)) << png_path << ": " << error;
  EXPECT_EQ(img.width, 1280u);
  EXPECT_EQ(img.height, 2000u);
  std::unordered_set<uint32_t> colors;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    colors.insert(uint32_t{img.rgb[i]} << 16 | uint32_t{img.rgb[i + 1]} << 8 | img.rgb[i + 2]);
  }
  // Text antialiasing alone gives hundreds of colours; a blank or error page gives a few.
  EXPECT_GT(colors.size(), 64u) << png_path;
  // The first series colour (#4e79a7) fills the bars of the first plot.
  EXPECT_GT(PixelsNear(img, 0x4e, 0x79, 0xa7), 5000u) << png_path << ": no bars visible";

  const auto r2 = testing::RunChromium(dir, {"--dump-dom", "file://" + html_path});
  ASSERT_EQ(r2.exit_code, 0) << "chromium --dump-dom\n" << r2.err;
  for (const auto& [id, want] : marks) {
    EXPECT_EQ(testing::PlotMarks(r2.out, id), std::optional<size_t>(want)) << id;
  }
  if (keep == nullptr || *keep == '\0') {
    if (!HasFailure()) std::filesystem::remove_all(dir, ec);
  } else {
    std::cout << "report: " << html_path << "\nscreenshot: " << png_path << "\n";
  }
}

// A real handoff report: `opmap analyze --report html` on the shared H100 BERT trace.
// Its per-layer time plot has one bar per layer type with GPU time (7); the roofline one
// point per operator group with FLOPs > 0 and bytes (12 of the 16 groups: the gathers
// have 0 FLOPs, which a log axis cannot place, and .item()'s copy has no figure), with the
// tensor-core and vector bf16 ridges drawn; and the class-share plot one segment per
// (layer type, class) with GPU time (8).
TEST(ReportChromiumTest, HandoffReportOfARealTraceRendersItsPlots) {
  constexpr char kTrace[] = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED(kTrace);
  if (std::string missing = testing::ChromiumMissing(); !missing.empty()) {
    if (missing.rfind("skip: ", 0) == 0) GTEST_SKIP() << missing.substr(6);
    FAIL() << missing.substr(6);
  }
  std::string tmpl = ::testing::TempDir() + "opmap_handoff_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::string dir = std::filesystem::absolute(tmpl).string();
  const std::string html = dir + "/bert.html";
  const auto made = testing::RunProcess(std::string(OPMAP_BIN_DIR) + "/opmap",
                                        {"analyze", testing::SharedPath(kTrace), "--report",
                                         "html", "--output", html, "--quiet"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto r = testing::RunChromium(dir, {"--dump-dom", "file://" + html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::PlotMarks(r.out, "plot-layer-time"), std::optional<size_t>(7));
  EXPECT_EQ(testing::PlotMarks(r.out, "plot-roofline"), std::optional<size_t>(12));
  EXPECT_EQ(testing::PlotMarks(r.out, "plot-class-share"), std::optional<size_t>(8));
  EXPECT_NE(r.out.find("ridge tensor-core bf16 295 FLOP/B"), std::string::npos);
  EXPECT_NE(r.out.find("ridge vector bf16 39.9 FLOP/B"), std::string::npos);
  EXPECT_NE(r.out.find("aten::addmm [[512], [141, 512], [512, 512], [], []]"), std::string::npos);
  EXPECT_NE(r.out.find("opmap-report kind=handoff"), std::string::npos);
  std::error_code ec;
  if (!HasFailure()) std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace opmap::analysis
