#include "analysis/graphs/execution_details.h"

#include <simdjson.h>

#include "absl/strings/str_format.h"

namespace opmap::analysis {
namespace {

namespace od = simdjson::ondemand;

constexpr int64_t kMaxBatchSize = int64_t{1} << 31;

absl::Status EntryError(size_t index, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("execution_details.json: entry [%d]: %s", index, what));
}

}  // namespace

absl::StatusOr<std::vector<CaptureFileEntry>> ParseExecutionDetails(std::string_view json) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  od::array entries;
  if (parser.iterate(padded).get(doc) || doc.get_array().get(entries)) {
    return absl::InvalidArgumentError(
        "execution_details.json: not a JSON array of {\"file\", \"batch_size\", \"mode\"} objects");
  }
  std::vector<CaptureFileEntry> out;
  size_t index = 0;
  for (auto element : entries) {
    od::object obj;
    if (element.get_object().get(obj)) return EntryError(index, "not an object");
    CaptureFileEntry entry;
    bool has_file = false;
    for (auto field_result : obj) {
      od::field field;
      if (std::move(field_result).get(field)) return EntryError(index, "malformed JSON");
      std::string_view key;
      if (field.unescaped_key().get(key)) return EntryError(index, "malformed key");
      od::value value = field.value();
      if (key == "file") {
        std::string_view file;
        if (value.get_string().get(file)) return EntryError(index, "field \"file\" is not a string");
        if (file.empty() || file == "." || file == ".." ||
            file.find('/') != std::string_view::npos || file.find('\0') != std::string_view::npos) {
          return EntryError(index, "field \"file\" must name one file in the folder (no '/')");
        }
        entry.file = std::string(file);
        has_file = true;
      } else if (key == "batch_size") {
        int64_t bs;
        if (value.get_int64().get(bs) || bs < 1 || bs >= kMaxBatchSize) {
          return EntryError(index, "field \"batch_size\" is not an integer in [1, 2^31)");
        }
        entry.batch_size = bs;
      } else if (key == "mode") {
        std::string_view mode;
        if (value.get_string().get(mode)) return EntryError(index, "field \"mode\" is not a string");
        entry.mode = std::string(mode.substr(0, 64));
      }
    }
    if (!has_file) return EntryError(index, "missing field \"file\"");
    out.push_back(std::move(entry));
    ++index;
  }
  return out;
}

int64_t BatchSizeFromFileName(std::string_view name) {
  size_t at = name.find("bs_");
  while (at != std::string_view::npos) {
    if (at == 0 || name[at - 1] == '_' || name[at - 1] == '-' || name[at - 1] == '.') {
      int64_t bs = 0;
      size_t i = at + 3;
      size_t digits = 0;
      while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10) {
        bs = bs * 10 + (name[i] - '0');
        ++i;
        ++digits;
      }
      if (digits > 0 && digits < 10 && bs >= 1 && (i == name.size() || name[i] == '_' || name[i] == '.')) {
        return bs;
      }
    }
    at = name.find("bs_", at + 1);
  }
  return -1;
}

}  // namespace opmap::analysis
