#include "analysis/import/decimal.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"

namespace opmap::analysis {
namespace {

// Multiplies-and-adds with overflow detection.
bool MulAdd(int64_t& acc, int64_t mul, int64_t add) {
  int64_t r;
  if (__builtin_mul_overflow(acc, mul, &r)) return false;
  if (__builtin_add_overflow(r, add, &r)) return false;
  acc = r;
  return true;
}

}  // namespace

std::optional<int64_t> MicrosTextToNanos(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  size_t int_begin = i;
  while (i < text.size() && absl::ascii_isdigit(text[i])) ++i;
  std::string_view int_part = text.substr(int_begin, i - int_begin);
  if (int_part.empty()) return std::nullopt;
  std::string_view frac_part;
  if (i < text.size() && text[i] == '.') {
    size_t f = ++i;
    while (i < text.size() && absl::ascii_isdigit(text[i])) ++i;
    frac_part = text.substr(f, i - f);
    if (frac_part.empty()) return std::nullopt;
  }
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    size_t e = i;
    while (i < text.size() && absl::ascii_isdigit(text[i]) && i - e < 6)
      exponent = exponent * 10 + (text[i++] - '0');
    if (i == e || (i < text.size() && absl::ascii_isdigit(text[i]))) return std::nullopt;
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;

  // Value = digits(int_part frac_part) × 10^(exponent − |frac|) µs; ns shifts by 3 more.
  int64_t shift = exponent - static_cast<int64_t>(frac_part.size()) + 3;
  int64_t acc = 0;
  std::string_view all[2] = {int_part, frac_part};
  // Digits that fall below 1 ns are only looked at for rounding.
  int64_t total_digits = static_cast<int64_t>(int_part.size() + frac_part.size());
  int64_t kept = total_digits + std::min<int64_t>(shift, 0);
  int64_t seen = 0;
  int round_digit = -1;
  for (std::string_view part : all) {
    for (char c : part) {
      if (seen < kept) {
        if (!MulAdd(acc, 10, c - '0')) return std::nullopt;
      } else if (seen == kept) {
        round_digit = c - '0';
      }
      ++seen;
    }
  }
  for (int64_t k = 0; k < shift; ++k) {
    if (!MulAdd(acc, 10, 0)) return std::nullopt;
  }
  if (round_digit >= 5 && !MulAdd(acc, 1, 1)) return std::nullopt;
  return negative ? -acc : acc;
}

}  // namespace opmap::analysis
