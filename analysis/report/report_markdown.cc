#include "analysis/report/report_markdown.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/report/svg_plot.h"
#include "common/text/utf8.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

constexpr size_t kMaxPlotRows = 20;
// Columns are padded for whoever reads the raw file, but a 200-character kernel name
// must not push every other row that wide.
constexpr size_t kMaxPad = 40;

using text::Utf8CodePoints;

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
}

// A paragraph line must not turn into a heading, list item, quote or rule.
std::string EscapeBlockStart(std::string s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i == s.size()) return s;
  const char c = s[i];
  const bool list = (c == '-' || c == '+') && (i + 1 == s.size() || s[i + 1] == ' ');
  if (c == '#' || c == '=' || list) s.insert(i, "\\");
  size_t d = i;
  while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) ++d;
  if (d > i && d < s.size() && (s[d] == '.' || s[d] == ')')) s.insert(d, "\\");
  return s;
}

struct Table {
  std::vector<std::string> columns;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
};

void AppendTable(std::string& out, const Table& t) {
  const size_t n = t.columns.size();
  if (n == 0) return;
  std::vector<std::vector<std::string>> cells;
  cells.push_back({});
  for (const std::string& c : t.columns) cells.back().push_back(MarkdownEscape(c));
  for (const auto& row : t.rows) {
    cells.push_back({});
    // Rows are trusted to match the header, but a short row must not shift the columns.
    for (size_t i = 0; i < n; ++i)
      cells.back().push_back(i < row.size() ? MarkdownEscape(row[i]) : "");
  }
  std::vector<size_t> width(n, 3);
  for (const auto& row : cells) {
    for (size_t i = 0; i < n; ++i)
      width[i] = std::max(width[i], std::min(kMaxPad, Utf8CodePoints(row[i])));
  }
  auto line = [&](const std::vector<std::string>& row) {
    out += "|";
    for (size_t i = 0; i < n; ++i) {
      const size_t w = Utf8CodePoints(row[i]);
      const std::string pad(w < width[i] ? width[i] - w : 0, ' ');
      const bool right = i < t.right.size() && t.right[i];
      out += " " + (right ? pad + row[i] : row[i] + pad) + " |";
    }
    out += "\n";
  };
  line(cells[0]);
  out += "|";
  for (size_t i = 0; i < n; ++i) {
    const bool right = i < t.right.size() && t.right[i];
    out += " " + std::string(width[i] - (right ? 1 : 0), '-') + (right ? ":" : "") + " |";
  }
  out += "\n";
  for (size_t r = 1; r < cells.size(); ++r) line(cells[r]);
}

void AppendMarkdownFacts(std::string& out,
                         const std::vector<std::pair<std::string, std::string>>& facts) {
  for (const auto& [k, v] : facts)
    out += "- **" + MarkdownEscape(k) + ":** " + MarkdownEscape(v) + "\n";
  if (!facts.empty()) out += "\n";
}

std::string LineText(const PlotLine& l) {
  const std::string name = l.name.empty() ? "reference" : l.name;
  if (l.x.has_value()) return name + ": x = " + FormatPlotValue(*l.x);
  if (!l.slope.has_value()) return name + ": y = " + FormatPlotValue(l.cap);
  return name + ": y = min(" + FormatPlotValue(*l.slope) + "·x, " + FormatPlotValue(l.cap) + ")";
}

void AppendPlot(std::string& out, const DocPlot& p) {
  const std::string title = MarkdownEscape(p.title.empty() ? p.id : p.title);
  if (!p.unavailable.empty()) {
    out += "Plot: " + title + " — unavailable: " + MarkdownEscape(p.unavailable) + "\n\n";
    return;
  }
  out += "Plot: " + title + " — in the HTML report\n\n";
  const bool bar = p.kind == PlotKind::kBar || p.kind == PlotKind::kStackedBar;
  const bool named = p.series.size() > 1;
  bool labelled = false;
  for (const PlotSeries& s : p.series) {
    for (const PlotPoint& pt : s.points) labelled |= !pt.label.empty();
  }
  Table t;
  auto column = [&t](const std::string& name, bool right) {
    t.columns.push_back(name);
    t.right.push_back(right);
  };
  if (named) column("series", false);
  if (bar) column(p.x_label.empty() ? "category" : p.x_label, false);
  if (!bar && labelled) column("point", false);
  if (!bar) column(p.x_label.empty() ? "x" : p.x_label, true);
  column(p.y_label.empty() ? "y" : p.y_label, true);
  size_t total = 0, skipped = 0;
  for (const PlotSeries& s : p.series) {
    for (const PlotPoint& pt : s.points) {
      // Same rule as the SVG: a point that cannot be drawn is not listed either.
      if (!std::isfinite(pt.y) || (!bar && !std::isfinite(pt.x))) {
        ++skipped;
        continue;
      }
      ++total;
      if (t.rows.size() >= kMaxPlotRows) continue;
      std::vector<std::string> row;
      if (named) row.push_back(s.name);
      if (bar || labelled) row.push_back(pt.label);
      if (!bar) row.push_back(FormatPlotValue(pt.x));
      row.push_back(FormatPlotValue(pt.y));
      t.rows.push_back(std::move(row));
    }
  }
  if (!t.rows.empty()) {
    AppendTable(out, t);
    out += "\n";
  }
  if (total > t.rows.size()) {
    const size_t more = total - t.rows.size();
    out +=
        absl::StrFormat("%d more %s in the HTML report.\n\n", more, more == 1 ? "point" : "points");
  }
  if (skipped > 0) {
    out += absl::StrFormat("%d non-finite %s not shown.\n\n", skipped,
                           skipped == 1 ? "point" : "points");
  }
  for (const PlotLine& l : p.lines) out += "- " + MarkdownEscape(LineText(l)) + "\n";
  if (!p.lines.empty()) out += "\n";
}

}  // namespace

std::string MarkdownEscape(const std::string& raw) {
  // Control, bidi and invalid bytes first (common/text/printable.h), then Markdown's own.
  const std::string s = text::Printable(raw);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '<':
      case '>':
      case '|':
        out += '\\';
        out += c;
        break;
      case '_': {
        const bool inner =
            i > 0 && i + 1 < s.size() && IsWordChar(s[i - 1]) && IsWordChar(s[i + 1]);
        if (!inner) out += '\\';
        out += c;
        break;
      }
      case '\r':
        break;
      case '\n':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderMarkdown(const ReportDocument& doc) {
  std::string out;
  if (!doc.title.empty()) out += "# " + MarkdownEscape(doc.title) + "\n\n";
  AppendMarkdownFacts(out, doc.header);
  for (const DocSection& sec : doc.sections) {
    out += "## " + MarkdownEscape(sec.heading) + "\n\n";
    for (const std::string& para : sec.paragraphs) {
      // Paragraph lines keep their breaks; each one is escaped as its own block start.
      size_t start = 0;
      std::string text;
      while (start <= para.size()) {
        const size_t nl = std::min(para.find('\n', start), para.size());
        if (!text.empty()) text += "\n";
        text += EscapeBlockStart(MarkdownEscape(para.substr(start, nl - start)));
        start = nl + 1;
      }
      out += text + "\n\n";
    }
    AppendMarkdownFacts(out, sec.facts);
    for (const DocTable& dt : sec.tables) {
      if (!dt.title.empty()) out += "**" + MarkdownEscape(dt.title) + "**\n\n";
      AppendTable(out, {dt.columns, dt.align_right, dt.rows});
      out += "\n";
      for (const std::string& note : dt.notes)
        out += EscapeBlockStart(MarkdownEscape(note)) + "\n\n";
    }
    for (const DocPlot& p : sec.plots) AppendPlot(out, p);
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

}  // namespace opmap::analysis
