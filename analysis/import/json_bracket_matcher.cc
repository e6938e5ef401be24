#include "analysis/import/json_bracket_matcher.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opmap::analysis {
namespace {

// One bit per byte of a 64-byte block.
struct Masks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

inline Masks Classify(const char* q) {
  Masks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  // '[' | 0x20 == '{' and ']' | 0x20 == '}', and no other byte maps to either.
  const __m128i fold = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'),
                close = _mm_set1_epi8('}');
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * i));
    const __m128i folded = _mm_or_si128(v, fold);
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (16 * i);
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
  }
#else
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    const char c = q[i];
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '[') m.open |= bit;
    if (c == '}' || c == ']') m.close |= bit;
  }
#endif
  return m;
}

// Bit i = xor of bits 0..i: 1 from an opening quote up to (not including) its closing one.
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The bytes escaped by a backslash (simdjson's json_string_scanner::find_escaped):
// within a run of backslashes every other one escapes the next byte. *prev_escaped
// carries a run that crosses into the next block.
inline uint64_t Escaped(uint64_t backslash, uint64_t* prev_escaped) {
  backslash &= ~*prev_escaped;
  const uint64_t follows_escape = backslash << 1 | *prev_escaped;
  constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
  const uint64_t odd_sequence_starts = backslash & ~kEvenBits & ~follows_escape;
  uint64_t sequences_starting_on_even_bits;
  *prev_escaped =
      __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits);
  const uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (kEvenBits ^ invert_mask) & follows_escape;
}

}  // namespace

void BracketMatcher::Start(uint64_t begin) {
  pos_ = begin;
  in_string_ = 0;
  escaped_ = 0;
  stack_.clear();
}

BracketMatcher::Result BracketMatcher::Scan(const char* data, size_t size, uint64_t base,
                                            bool final, uint64_t* at) {
  const char* q = data + (pos_ - base);
  const char* const end = data + size;
  auto offset = [&](const char* p) { return base + static_cast<uint64_t>(p - data); };
  while (true) {
    const size_t avail = static_cast<size_t>(end - q);
    // A partial block is classified only at the end of the text: bytes past the window
    // would otherwise change the carried string state.
    if (avail == 0 || (avail < 64 && !final)) {
      pos_ = offset(q);
      return Result::kNeedMore;
    }
    const Masks m = Classify(q);
    const uint64_t valid = avail >= 64 ? ~uint64_t{0} : (uint64_t{1} << avail) - 1;
    const uint64_t escaped = (m.backslash | escaped_) != 0 ? Escaped(m.backslash, &escaped_) : 0;
    const uint64_t in_string = PrefixXor(m.quote & ~escaped) ^ in_string_;
    in_string_ = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t brackets = (m.open | m.close) & ~in_string & valid;
    while (brackets != 0) {
      const int b = __builtin_ctzll(brackets);
      brackets &= brackets - 1;
      const char c = q[b];
      if (c == '{' || c == '[') {
        stack_.push_back(c);
        continue;
      }
      if (stack_.empty() || stack_.back() != (c == '}' ? '{' : '[')) {
        *at = offset(q + b);
        return Result::kMismatch;
      }
      stack_.pop_back();
      if (stack_.empty()) {
        *at = offset(q + b + 1);
        return Result::kClosed;
      }
    }
    if (avail <= 64) {
      pos_ = offset(end);
      return Result::kNeedMore;
    }
    q += 64;
  }
}

}  // namespace opmap::analysis
