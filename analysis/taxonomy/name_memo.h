#ifndef OPMAP_ANALYSIS_TAXONOMY_NAME_MEMO_H_
#define OPMAP_ANALYSIS_TAXONOMY_NAME_MEMO_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace opmap::analysis {

// A bounded, thread-safe memo of name -> small integer, shared by every thread of a
// process. A collector classifies each window's kernel names afresh, and a fleet's windows
// repeat the same few hundred names, so matching names against the rule tables was most of
// a small window's analysis cost. Names come from agents and files, so the memo is bounded
// by bytes (each entry counts its name plus kEntryOverhead); once full it stops learning
// and every further name is simply computed by the caller. Sharded by hash so concurrent
// readers rarely meet on one lock.
class NameMemo {
 public:
  static constexpr size_t kEntryOverhead = 64;

  explicit NameMemo(size_t max_bytes);
  NameMemo(const NameMemo&) = delete;
  NameMemo& operator=(const NameMemo&) = delete;

  std::optional<int> Find(std::string_view name) const;
  // Remembers `value` for `name` unless the name's shard has no room left; a name already
  // present keeps its first value.
  void Insert(std::string_view name, int value);

  // Bytes held (names plus overhead), at most the budget given at construction.
  size_t bytes() const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable absl::Mutex mu;
    absl::flat_hash_map<std::string, int> values ABSL_GUARDED_BY(mu);
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
  };

  Shard& ShardOf(std::string_view name) const;

  const size_t shard_budget_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TAXONOMY_NAME_MEMO_H_
