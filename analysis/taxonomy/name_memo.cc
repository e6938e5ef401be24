#include "analysis/taxonomy/name_memo.h"

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "common/base/absl_view.h"

namespace opmap::analysis {

NameMemo::NameMemo(size_t max_bytes) : shard_budget_(max_bytes / kShards) {}

NameMemo::Shard& NameMemo::ShardOf(std::string_view name) const {
  return shards_[absl::Hash<absl::string_view>{}(base::AbslView(name)) % kShards];
}

std::optional<int> NameMemo::Find(std::string_view name) const {
  Shard& shard = ShardOf(name);
  absl::ReaderMutexLock lock(&shard.mu);
  auto it = shard.values.find(base::AbslView(name));
  if (it == shard.values.end()) return std::nullopt;
  return it->second;
}

void NameMemo::Insert(std::string_view name, int value) {
  const size_t cost = name.size() + kEntryOverhead;
  Shard& shard = ShardOf(name);
  absl::MutexLock lock(&shard.mu);
  if (shard.bytes + cost > shard_budget_) return;
  if (shard.values.try_emplace(std::string(name), value).second) shard.bytes += cost;
}

size_t NameMemo::bytes() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mu);
    total += shard.bytes;
  }
  return total;
}

}  // namespace opmap::analysis
