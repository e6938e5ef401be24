#include "tests/testing/chromium.h"

#include <sys/stat.h>

#include <cstdlib>

namespace opmap::testing {

std::string ChromiumMissing() {
  struct stat st;
  if (stat(kChromium, &st) == 0) return "";
  const char* skip = std::getenv("OPMAP_NO_CHROMIUM");
  if (skip != nullptr && std::string(skip) == "1") {
    return std::string("skip: OPMAP_NO_CHROMIUM=1: ") + kChromium + " is not installed";
  }
  return std::string("fail: ") + kChromium +
         " is missing: install Debian's chromium package (scripts/setup.sh does), or set "
         "OPMAP_NO_CHROMIUM=1 to skip this test knowingly";
}

ProcessResult RunChromium(const std::string& dir, const std::vector<std::string>& args) {
  // Its own profile and HOME, so runs in parallel never share browser state.
  std::vector<std::string> argv = {"60",           kChromium,           "--headless",
                                   "--no-sandbox", "--disable-gpu",     "--hide-scrollbars",
                                   "--user-data-dir=" + dir + "/profile"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess("/usr/bin/timeout", argv, {{"HOME", dir}});
}

std::optional<size_t> PlotMarks(const std::string& dom, const std::string& id) {
  const std::string attr = "id=\"" + id + "\"";
  const size_t at = dom.find(attr);
  if (at == std::string::npos || dom.find(attr, at + 1) != std::string::npos) return std::nullopt;
  const size_t open = dom.rfind('<', at);
  if (open == std::string::npos || dom.compare(open, 5, "<svg ") != 0) return std::nullopt;
  const size_t close = dom.find("</svg>", at);
  if (close == std::string::npos) return std::nullopt;
  const std::string svg = dom.substr(open, close - open);
  size_t n = 0;
  for (size_t p = svg.find("class=\"mark\""); p != std::string::npos;
       p = svg.find("class=\"mark\"", p + 1)) {
    ++n;
  }
  return n;
}

}  // namespace opmap::testing
