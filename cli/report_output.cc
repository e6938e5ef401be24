#include "cli/report_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/text/json_writer.h"
#include "analysis/report/report_html.h"
#include "analysis/report/report_markdown.h"

namespace opmap::cli {

std::optional<ReportFormat> ParseReportFormat(std::string_view text) {
  if (text == "md" || text == "markdown") return ReportFormat::kMarkdown;
  if (text == "json") return ReportFormat::kJson;
  if (text == "html") return ReportFormat::kHtml;
  return std::nullopt;
}

std::string RenderReport(ReportFormat format, const analysis::ReportDocument& doc,
                         const std::string& json_object, const ReportMarker& marker) {
  const std::string line = FormatReportMarker(marker);
  switch (format) {
    case ReportFormat::kMarkdown:
      return "<!-- " + line + " -->\n" + analysis::RenderMarkdown(doc);
    case ReportFormat::kHtml: {
      std::string html = analysis::RenderHtml(doc);
      // After <head>, not before <!DOCTYPE>: a comment there would drop the page into
      // quirks mode.
      const size_t head = html.find("<head>");
      const std::string comment = "\n<!-- " + line + " -->";
      if (head != std::string::npos) {
        html.insert(head + 6, comment);
      } else {
        html += comment + "\n";
      }
      return html;
    }
    case ReportFormat::kJson: {
      std::string field;
      text::AppendJsonEscaped(line, &field);
      std::string out = "{\"marker\":" + field;
      if (json_object.size() > 2) out += "," + json_object.substr(1);
      else out += "}";
      return out + "\n";
    }
  }
  return {};
}

std::string WriteReport(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text;
    std::cout.flush();
    return std::cout ? "" : "stdout: write failed";
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return tmp + ": " + std::strerror(errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                  ::fsync(fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    return tmp + ": " + std::strerror(err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return path + ": " + std::strerror(e);
  }
  return "";
}

}  // namespace opmap::cli
