// StringTable interns names (kernels, operators, ranges) so that events carry a 32-bit id.
// Ids are dense from 0 and stable for the table's lifetime; id 0 is always "".
// Not thread-safe: one importer fills one table.
#ifndef OPMAP_ANALYSIS_MODEL_STRING_TABLE_H_
#define OPMAP_ANALYSIS_MODEL_STRING_TABLE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace opmap::analysis {

using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;

class StringTable {
 public:
  StringTable() { Intern(""); }
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StringId Intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    // std::deque never moves its elements, so the views in index_ stay valid.
    storage_.emplace_back(s);
    StringId id = static_cast<StringId>(storage_.size() - 1);
    index_.emplace(std::string_view(storage_.back()), id);
    return id;
  }
  // Returns kNotFound when `s` was never interned.
  static constexpr StringId kNotFound = UINT32_MAX;
  StringId Find(std::string_view s) const {
    auto it = index_.find(s);
    return it == index_.end() ? kNotFound : it->second;
  }
  std::string_view Get(StringId id) const { return storage_[id]; }
  size_t size() const { return storage_.size(); }

 private:
  std::deque<std::string> storage_;
  absl::flat_hash_map<std::string_view, StringId> index_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_MODEL_STRING_TABLE_H_
