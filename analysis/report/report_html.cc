#include "analysis/report/report_html.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/report/svg_plot.h"

namespace opmap::analysis {
namespace {

constexpr int kPlotWidth = 1100;  // the content column at 1280 px, minus padding

// One stylesheet for the page; system fonts only, so nothing is fetched.
constexpr const char* kCss = R"css(
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:#1f2328;
  font:15px/1.5 system-ui,-apple-system,"Segoe UI","DejaVu Sans","Liberation Sans",Arial,sans-serif}
.page{max-width:1180px;margin:0 auto;padding:24px 32px 48px;background:#fff;min-height:100vh}
h1{font-size:26px;margin:0 0 8px}
h2{font-size:20px;margin:36px 0 10px;padding-bottom:4px;border-bottom:1px solid #e1e4e8}
p{margin:8px 0;white-space:pre-line;max-width:80em}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 18px;margin:10px 0 16px}
dl.facts dt{font-weight:600;color:#444}
dl.facts dd{margin:0;overflow-wrap:anywhere}
nav.toc{background:#f6f8fa;border:1px solid #e1e4e8;border-radius:6px;padding:8px 20px;margin:16px 0}
nav.toc h2{font-size:16px;margin:4px 0;border:0}
nav.toc ol{margin:4px 0;padding-left:22px}
nav.toc ul{margin:0;padding-left:18px;font-size:14px}
a{color:#0b5cad;text-decoration:none}
a:hover{text-decoration:underline}
.table-wrap{overflow-x:auto;margin:12px 0}
table{border-collapse:collapse;font-size:13.5px}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{padding:4px 10px;border-bottom:1px solid #e6e8eb;text-align:left;vertical-align:top}
th{background:#f2f4f7;font-weight:600}
td{max-width:560px;overflow-wrap:anywhere}
tbody tr:nth-child(even){background:#fafbfc}
th.num,td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
p.note{font-size:13px;color:#57606a;margin:2px 0}
figure.plot{margin:18px 0}
figure.plot svg{display:block;max-width:100%;height:auto}
@media print{body{background:#fff}.page{padding:0}nav.toc{display:none}figure.plot{break-inside:avoid}}
)css";

std::string E(const std::string& s) { return XmlEscape(s); }

// HTML ids: letters, digits, '-', '_' only, so they survive CSS selectors and URLs.
std::string SafeId(const std::string& id) {
  std::string out;
  for (char c : id) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    out += ok ? c : '-';
  }
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out[0]))) out = "p-" + out;
  return out;
}

std::string Unique(std::string id, std::set<std::string>& used) {
  const std::string base = id;
  for (int n = 2; used.count(id) > 0; ++n) id = absl::StrFormat("%s-%d", base, n);
  used.insert(id);
  return id;
}

void AppendHtmlFacts(std::string& out,
                     const std::vector<std::pair<std::string, std::string>>& facts) {
  if (facts.empty()) return;
  out += "<dl class=\"facts\">\n";
  for (const auto& [k, v] : facts) out += "<dt>" + E(k) + "</dt><dd>" + E(v) + "</dd>\n";
  out += "</dl>\n";
}

void AppendTable(std::string& out, const DocTable& t) {
  const size_t n = t.columns.size();
  auto cls = [&t](size_t i) {
    return i < t.align_right.size() && t.align_right[i] ? " class=\"num\"" : "";
  };
  out += "<div class=\"table-wrap\"><table>\n";
  if (!t.title.empty()) out += "<caption>" + E(t.title) + "</caption>\n";
  out += "<thead><tr>";
  for (size_t i = 0; i < n; ++i) out += absl::StrFormat("<th%s>%s</th>", cls(i), E(t.columns[i]));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    // A short row still fills every column, so the grid never shifts.
    for (size_t i = 0; i < n; ++i) {
      out += absl::StrFormat("<td%s>%s</td>", cls(i), i < row.size() ? E(row[i]) : "");
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  for (const std::string& note : t.notes) out += "<p class=\"note\">" + E(note) + "</p>\n";
}

int PlotHeight(const DocPlot& p) {
  if ((p.kind != PlotKind::kBar && p.kind != PlotKind::kStackedBar) || p.series.empty()) {
    return 440;
  }
  // Many categories get rotated labels, which take their room from the plot area.
  size_t categories = 0;
  for (const PlotSeries& s : p.series) categories = std::max(categories, s.points.size());
  return categories > 12 ? 520 : 440;
}

}  // namespace

std::string RenderHtml(const ReportDocument& doc) {
  // Plot ids first: they are the stable names links and tests use, sections yield to them.
  std::set<std::string> used;
  std::vector<std::vector<std::string>> plot_ids;
  int plot_n = 0;
  for (const DocSection& sec : doc.sections) {
    plot_ids.emplace_back();
    for (const DocPlot& p : sec.plots) {
      ++plot_n;
      std::string id = SafeId(p.id);
      if (id.empty()) id = absl::StrFormat("plot-%d", plot_n);
      plot_ids.back().push_back(Unique(id, used));
    }
  }
  std::vector<std::string> section_ids;
  for (size_t i = 0; i < doc.sections.size(); ++i) {
    section_ids.push_back(Unique(absl::StrFormat("section-%d", i + 1), used));
  }

  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + E(doc.title.empty() ? "opmap report" : doc.title) + "</title>\n";
  out += std::string("<style>") + kCss + "</style>\n</head>\n<body>\n<div class=\"page\">\n";
  out += "<header>\n<h1>" + E(doc.title.empty() ? "opmap report" : doc.title) + "</h1>\n";
  AppendHtmlFacts(out, doc.header);
  out += "</header>\n";

  if (!doc.sections.empty()) {
    out += "<nav class=\"toc\">\n<h2>Contents</h2>\n<ol>\n";
    for (size_t i = 0; i < doc.sections.size(); ++i) {
      const DocSection& sec = doc.sections[i];
      out += "<li><a href=\"#" + section_ids[i] + "\">" + E(sec.heading) + "</a>";
      if (!sec.plots.empty()) {
        out += "\n<ul>\n";
        for (size_t j = 0; j < sec.plots.size(); ++j) {
          const DocPlot& p = sec.plots[j];
          out += "<li><a href=\"#" + plot_ids[i][j] + "\">" + E(p.title.empty() ? p.id : p.title) +
                 "</a></li>\n";
        }
        out += "</ul>\n";
      }
      out += "</li>\n";
    }
    out += "</ol>\n</nav>\n";
  }

  out += "<main>\n";
  for (size_t i = 0; i < doc.sections.size(); ++i) {
    const DocSection& sec = doc.sections[i];
    out += "<section id=\"" + section_ids[i] + "\">\n<h2>" + E(sec.heading) + "</h2>\n";
    for (const std::string& para : sec.paragraphs) out += "<p>" + E(para) + "</p>\n";
    AppendHtmlFacts(out, sec.facts);
    for (const DocTable& t : sec.tables) AppendTable(out, t);
    for (size_t j = 0; j < sec.plots.size(); ++j) {
      DocPlot p = sec.plots[j];
      p.id = plot_ids[i][j];
      out +=
          "<figure class=\"plot\">\n" + RenderSvgPlot(p, kPlotWidth, PlotHeight(p)) + "</figure>\n";
    }
    out += "</section>\n";
  }
  out += "</main>\n</div>\n</body>\n</html>\n";
  return out;
}

}  // namespace opmap::analysis
