#include "analysis/report/plot_axis.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "absl/strings/str_format.h"
#include "analysis/report/svg_plot.h"
#include "common/text/utf8.h"

namespace opmap::analysis::plot_internal {

std::string Truncate(const std::string& s, size_t max_chars) {
  return text::ShortenToCodePoints(s, max_chars, "\xE2\x80\xA6");  // "…"
}

Formatted FormatSig(double v, int sig) {
  if (!std::isfinite(v)) return {"n/a", 0};
  if (v == 0) return {"0", 0};
  static const char* kSi[] = {"", "k", "M", "G", "T", "P", "E"};
  const double a = std::fabs(v);
  if (a < 1e-3 || a >= 1e21) {
    std::string t = absl::StrFormat("%.*g", sig, v);
    return {t, std::strtod(t.c_str(), nullptr)};
  }
  int idx = a >= 1e3 ? std::min(6, static_cast<int>(std::floor(std::log10(a) / 3))) : 0;
  for (;;) {
    const double scale = std::pow(10.0, 3 * idx);
    const double s = v / scale;
    const int mag = static_cast<int>(std::floor(std::log10(std::fabs(s))));
    std::string t = absl::StrFormat("%.*f", std::max(0, sig - 1 - mag), s);
    const double back = std::strtod(t.c_str(), nullptr);
    if (std::fabs(back) >= 1000 && idx < 6) {  // 999.96 rounds up to the next prefix
      ++idx;
      continue;
    }
    if (t.find('.') != std::string::npos) {
      while (t.back() == '0') t.pop_back();
      if (t.back() == '.') t.pop_back();
    }
    if (t == "-0") t = "0";
    return {t + kSi[idx], back * scale};
  }
}

namespace {

// The shortest label that still tells neighbouring ticks apart.
std::string TickLabel(double v, double step) {
  Formatted f;
  for (int sig = 1; sig <= 12; ++sig) {
    f = FormatSig(v, sig);
    if (std::fabs(f.value - v) <= std::fabs(step) * 1e-6) break;
  }
  return f.text;
}

double NiceStep(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * mag;
}

}  // namespace

// Domain widened to whole steps so the frame starts and ends on a labelled tick.
Axis LinearAxis(Range r, bool include_zero) {
  Axis a;
  if (r.Empty()) r = {0, 1};
  if (include_zero) r.Add(0);
  if (r.lo == r.hi) {
    const double pad = r.lo == 0 ? 1 : std::fabs(r.lo) * 0.5;
    r = {r.lo - pad, r.hi + pad};
  }
  const double step = NiceStep((r.hi - r.lo) / 5);
  const double k_lo = std::floor(r.lo / step), k_hi = std::ceil(r.hi / step);
  a.lo = k_lo * step;
  a.hi = k_hi * step;
  // Bounded: a huge offset against a tiny range would otherwise never advance.
  for (int i = 0; i <= 12 && k_lo + i <= k_hi; ++i) {
    const double v = (k_lo + i) * step;
    a.ticks.push_back({v, TickLabel(v, step)});
  }
  return a;
}

// Whole decades; every decade labelled up to 8 of them, minor 2..9 ticks while there is room.
Axis LogAxis(Range r) {
  Axis a;
  a.log = true;
  if (r.Empty()) r = {1, 10};
  a.lo = std::floor(std::log10(r.lo));
  a.hi = std::ceil(std::log10(r.hi));
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  const int decades = static_cast<int>(a.hi - a.lo);
  const int every = std::max(1, (decades + 7) / 8);
  for (int e = 0; e <= decades; ++e) {
    const double v = std::pow(10.0, a.lo + e);
    a.ticks.push_back({v, e % every == 0 ? TickLabel(v, v) : std::string()});
    if (decades <= 6 && e < decades) {
      for (int m = 2; m <= 9; ++m) a.ticks.push_back({m * v, std::string()});
    }
  }
  return a;
}

std::string Px(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = absl::StrFormat("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

void Canvas::Text(double x, double y, const std::string& s, const std::string& attrs) {
  absl::StrAppendFormat(&out, "<text x=\"%s\" y=\"%s\"%s>%s</text>\n", Px(x), Px(y), attrs,
                        XmlEscape(s));
}

void Canvas::Line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  absl::StrAppendFormat(&out, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"%s/>\n", Px(x1),
                        Px(y1), Px(x2), Px(y2), attrs);
}

std::string SeriesColor(const PlotSeries& s, size_t index) {
  // Tableau 10: distinguishable for common color-vision deficiencies and in grayscale print.
  static constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                             "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                             "#9c755f", "#bab0ac"};
  bool plain = !s.color.empty() && s.color.size() <= 64;
  for (char ch : s.color) {
    const unsigned char c = static_cast<unsigned char>(ch);
    plain &= std::isalnum(c) || std::string_view("#(),.%- ").find(ch) != std::string_view::npos;
  }
  if (plain) return s.color;
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string DataAttrs(const std::string& series, const std::string& label) {
  return absl::StrFormat(" data-series=\"%s\" data-label=\"%s\"", XmlEscape(series),
                         XmlEscape(label));
}

}  // namespace opmap::analysis::plot_internal

namespace opmap::analysis {

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (c < 0x20 && ch != '\t' && ch != '\n') break;
        if (c == 0x7F) break;
        out += ch;
    }
  }
  return out;
}

}  // namespace opmap::analysis
