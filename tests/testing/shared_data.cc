#include "tests/testing/shared_data.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include <cctype>

namespace opmap::testing {

std::string SharedDir() {
  const char* env = std::getenv("OPMAP_SHARED_DIR");
  return env && *env ? env : OPMAP_SHARED_DIR;
}

std::string SharedPath(const std::string& relative) { return SharedDir() + "/" + relative; }

std::string SharedTestName(const std::string& relative) {
  std::string name = relative.substr(relative.find('/') + 1);
  for (char& ch : name) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

bool SharedFileExists(const std::string& relative) {
  struct stat st;
  return stat(SharedPath(relative).c_str(), &st) == 0;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::abort();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::vector<std::string> SplitCsvLine(const std::string& text, size_t& pos) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        field.push_back('"');
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c == '\n') {
      ++pos;
      break;
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  fields.push_back(field);
  return fields;
}

}  // namespace

std::vector<CsvRow> ReadCsv(const std::string& path) {
  std::string text = ReadFileOrDie(path);
  size_t pos = 0;
  std::vector<std::string> header = SplitCsvLine(text, pos);
  std::vector<CsvRow> rows;
  while (pos < text.size()) {
    std::vector<std::string> fields = SplitCsvLine(text, pos);
    if (fields.size() == 1 && fields[0].empty()) continue;
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double ToDouble(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

}  // namespace opmap::testing
