#include "analysis/taxonomy/name_memo.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis::name_memo_test {

TEST(NameMemo, RemembersTheFirstValueOfEachName) {
  NameMemo memo(1 << 20);
  EXPECT_FALSE(memo.Find("ampere_sgemm_128x64_nn").has_value());
  memo.Insert("ampere_sgemm_128x64_nn", 4);
  memo.Insert("ampere_sgemm_128x64_nn", 7);
  ASSERT_TRUE(memo.Find("ampere_sgemm_128x64_nn").has_value());
  EXPECT_EQ(*memo.Find("ampere_sgemm_128x64_nn"), 4);
  EXPECT_FALSE(memo.Find("Ampere_sgemm_128x64_nn").has_value());  // names are exact keys
  EXPECT_EQ(memo.bytes(), std::string("ampere_sgemm_128x64_nn").size() + NameMemo::kEntryOverhead);
}

// A hostile agent sending endless distinct long names fills the memo to its budget and no
// further: every later name misses (the caller computes it), the memory stays bounded.
TEST(NameMemo, StopsLearningAtItsByteBudget) {
  constexpr size_t kBudget = 64 << 10;
  NameMemo memo(kBudget);
  const std::string pad(1000, 'x');
  size_t remembered = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string name = pad + std::to_string(i);
    memo.Insert(name, i);
    if (memo.Find(name).has_value()) ++remembered;
  }
  EXPECT_LE(memo.bytes(), kBudget);
  EXPECT_GT(remembered, 0u);
  EXPECT_LT(remembered, 64u);  // 64 KiB holds at most 61 names of ~1 KiB
}

TEST(NameMemo, ConcurrentReadersAndWritersAgree) {
  NameMemo memo(1 << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memo] {
      for (int i = 0; i < 2000; ++i) {
        const std::string name = "kernel_" + std::to_string(i % 300);
        memo.Insert(name, i % 300);
        std::optional<int> v = memo.Find(name);
        ASSERT_TRUE(v.has_value());
        ASSERT_EQ(*v, i % 300);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(memo.Find("kernel_299").has_value());
}

}  // namespace opmap::analysis::name_memo_test
