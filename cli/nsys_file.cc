#include "cli/nsys_file.h"

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/import/nsys_importer.h"

namespace opmap::cli {
namespace {

// "file:" URI of a path: '%', '?' and '#' would end or escape the path part.
std::string FileUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      absl::StrAppend(&uri, absl::StrFormat("%%%02X", static_cast<unsigned char>(c)));
    } else {
      uri.push_back(c);
    }
  }
  return uri + "?mode=ro&immutable=1";
}

}  // namespace

bool IsNsysFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16];
  in.read(head, sizeof(head));
  return in.gcount() == sizeof(head) &&
         analysis::LooksLikeSqlite(std::string_view(head, sizeof(head)));
}

bool IsStreamableNsysFile(const std::string& path) {
  if (!IsNsysFile(path)) return false;
  absl::StatusOr<NsysDb> db = OpenNsysFile(path);
  if (!db.ok()) return true;  // the streamed read says what is wrong
  absl::StatusOr<bool> nodes = analysis::NsysRecordsGraphNodes(db->get());
  return !nodes.ok() || !*nodes;
}

absl::StatusOr<NsysDb> OpenNsysFile(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(FileUri(path).c_str(), &raw,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  NsysDb db(raw);
  if (rc != SQLITE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open the SQLite file: ", raw ? sqlite3_errmsg(raw) : "out of memory"));
  }
  return db;
}

}  // namespace opmap::cli
