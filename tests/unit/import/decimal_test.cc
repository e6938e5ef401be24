// MicrosTextToNanos: Kineto's µs text to integer ns, exactly, with the documented rounding
// (digits past the third fractional one round half away from zero).
#include "analysis/import/decimal.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(MicrosTextToNanosTest, FractionsAreExact) {
  // 13 integer digits of µs: 1419247333430.849 µs = 1,419,247,333,430,849 ns.
  EXPECT_EQ(MicrosTextToNanos("1419247333430.849"), int64_t{1419247333430849});
  EXPECT_EQ(MicrosTextToNanos("1.2"), 1200);
  EXPECT_EQ(MicrosTextToNanos("0.5"), 500);
  EXPECT_EQ(MicrosTextToNanos("4.928"), 4928);
  EXPECT_EQ(MicrosTextToNanos("0.001"), 1);
  // Python prints this ts as 1712195495505543.2; a double can't hold it to the ns.
  EXPECT_EQ(MicrosTextToNanos("1712195495505543.2"), int64_t{1712195495505543200});
  // The text as written in hta_ns_resolution_v100_rank0 (the first kernel's ts).
  EXPECT_EQ(MicrosTextToNanos("1712195495505582.988"), int64_t{1712195495505582988});
  EXPECT_NE(static_cast<int64_t>(1712195495505582.988 * 1000), int64_t{1712195495505582988})
      << "the double path would be exact here, so this case proves nothing";
  EXPECT_EQ(MicrosTextToNanos("1712195495505543.140"), int64_t{1712195495505543140});
  EXPECT_EQ(MicrosTextToNanos("4203669604595.407"), int64_t{4203669604595407});
}

TEST(MicrosTextToNanosTest, SubNanosecondDigitsRoundHalfAwayFromZero) {
  // 768.5 ns -> 769: only the first dropped digit decides.
  EXPECT_EQ(MicrosTextToNanos("0.7685"), 769);
  EXPECT_EQ(MicrosTextToNanos("0.7684"), 768);
  EXPECT_EQ(MicrosTextToNanos("0.76849999"), 768);
  EXPECT_EQ(MicrosTextToNanos("0.76850000"), 769);
  EXPECT_EQ(MicrosTextToNanos("0.7689"), 769);
  EXPECT_EQ(MicrosTextToNanos("0.0004"), 0);
  EXPECT_EQ(MicrosTextToNanos("0.0005"), 1);
  EXPECT_EQ(MicrosTextToNanos("0.9999"), 1000);  // carries into the next digit
  EXPECT_EQ(MicrosTextToNanos("-0.7685"), -769);  // away from zero
  EXPECT_EQ(MicrosTextToNanos("-0.7684"), -768);
  EXPECT_EQ(MicrosTextToNanos("1419247333430.8495"), int64_t{1419247333430850});
  EXPECT_EQ(MicrosTextToNanos("1419247333430.84950"), int64_t{1419247333430850});
  EXPECT_EQ(MicrosTextToNanos("1419247333430.8494999"), int64_t{1419247333430849});
  EXPECT_EQ(MicrosTextToNanos("1419247333430.8499995"), int64_t{1419247333430850});
}

TEST(MicrosTextToNanosTest, Integers) {
  EXPECT_EQ(MicrosTextToNanos("0"), 0);
  EXPECT_EQ(MicrosTextToNanos("7"), 7000);
  EXPECT_EQ(MicrosTextToNanos("1623142623460111"), int64_t{1623142623460111000});
  EXPECT_EQ(MicrosTextToNanos("1.000"), 1000);
  EXPECT_EQ(MicrosTextToNanos("12.0"), 12000);
}

TEST(MicrosTextToNanosTest, Negatives) {
  EXPECT_EQ(MicrosTextToNanos("-1"), -1000);
  EXPECT_EQ(MicrosTextToNanos("-1.5"), -1500);
  EXPECT_EQ(MicrosTextToNanos("-0"), 0);
  EXPECT_EQ(MicrosTextToNanos("-0.0004"), 0);  // rounds to zero: not "negative"
  EXPECT_EQ(MicrosTextToNanos("-1419247333430.849"), int64_t{-1419247333430849});
}

TEST(MicrosTextToNanosTest, Exponents) {
  EXPECT_EQ(MicrosTextToNanos("1.5e3"), 1500000);
  EXPECT_EQ(MicrosTextToNanos("1.5E3"), 1500000);
  EXPECT_EQ(MicrosTextToNanos("1.5e+3"), 1500000);
  EXPECT_EQ(MicrosTextToNanos("2E-3"), 2);
  EXPECT_EQ(MicrosTextToNanos("2e-4"), 0);  // 0.2 ns
  EXPECT_EQ(MicrosTextToNanos("5e-4"), 1);  // 0.5 ns rounds up
  EXPECT_EQ(MicrosTextToNanos("1e-30"), 0);
  EXPECT_EQ(MicrosTextToNanos("1e0"), 1000);
  EXPECT_EQ(MicrosTextToNanos("1.419247333430849e12"), int64_t{1419247333430849});
  EXPECT_EQ(MicrosTextToNanos("14192473334308.49e-1"), int64_t{1419247333430849});
  EXPECT_EQ(MicrosTextToNanos("1.712195495505582988e15"), int64_t{1712195495505582988});
  EXPECT_EQ(MicrosTextToNanos("-2.5e1"), -25000);
  EXPECT_EQ(MicrosTextToNanos("0e400"), 0);
}

TEST(MicrosTextToNanosTest, GarbageIsRejected) {
  for (const char* bad : {"", "-", "1.", ".5", "1e", "1e+", "1e-", "abc", "+5", " 5", "5 ",
                          "1..2", "1.2.3", "0x10", "1,5", "--1", "1e5.5", "\"5\"", "nan",
                          "inf", "1_000", "1e1234567"}) {
    EXPECT_EQ(MicrosTextToNanos(bad), std::nullopt) << "text: '" << bad << "'";
  }
}

TEST(MicrosTextToNanosTest, Int64OverflowIsRejected) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.807"), kMax);
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.8075"), std::nullopt);  // rounding overflows
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.8074"), kMax);
  EXPECT_EQ(MicrosTextToNanos("9223372036854776"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("1e16"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("1e400"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("-1e400"), std::nullopt);
}

}  // namespace
}  // namespace opmap::analysis
