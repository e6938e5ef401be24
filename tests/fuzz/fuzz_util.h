// Helpers the fuzz targets share (tests/fuzz/*_fuzzer.cc). Header-only, so a target is
// one source file in both builds: the libFuzzer build (clang, -DOPMAP_FUZZ=ON) and the
// replay build (gcc, tests/fuzz/replay_main.cc runs the committed inputs under ctest).
//
// What counts as a finding in every target: a crash, a sanitizer report, and a broken
// invariant, reported with Fail() (abort, so libFuzzer saves the input and the replay
// test fails in the gcc build too).
#ifndef OPMAP_TESTS_FUZZ_FUZZ_UTIL_H_
#define OPMAP_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/base/little_endian.h"

namespace opmap::fuzz {

// A broken invariant: says which and aborts.
[[noreturn]] inline void Fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "FUZZ INVARIANT BROKEN: %.*s%s%.*s\n", static_cast<int>(what.size()),
               what.data(), detail.empty() ? "" : ": ", static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

inline void Check(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) Fail(what, detail);
}

// OPMAP_FUZZ_SKIP=ID[,ID...]: findings known and still open (docs/fuzzing.md lists their
// ids) that a long run should get past: the target skips that check, or stops making the
// input that triggers it. Unset (ctest, the replays), every check runs.
inline bool KnownOpen(std::string_view id) {
  static const std::string skip = [] {
    const char* s = std::getenv("OPMAP_FUZZ_SKIP");
    return s == nullptr ? std::string() : "," + std::string(s) + ",";
  }();
  return skip.find("," + std::string(id) + ",") != std::string::npos;
}

// An error must say what is wrong: the CLI and the collector print it as the diagnosis.
inline void CheckErrorSaysWhy(const absl::Status& status, std::string_view where) {
  if (!status.ok() && status.message().empty()) Fail(where, "error status with no message");
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Reads an input front to back; past its end every read gives zeros / "".
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  explicit Reader(std::string_view s)
      : p_(reinterpret_cast<const uint8_t*>(s.data())), left_(s.size()) {}

  bool empty() const { return left_ == 0; }
  size_t left() const { return left_; }

  uint8_t U8() { return static_cast<uint8_t>(Int(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Int(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Int(4)); }
  uint64_t U64() { return Int(8); }

  // Up to `n` bytes (fewer at the end of the input).
  std::string_view Bytes(size_t n) {
    n = n < left_ ? n : left_;
    std::string_view out(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return out;
  }
  std::string_view Rest() { return Bytes(left_); }

  // One length-prefixed chunk (AppendChunk's format: u32 little-endian length, then the
  // bytes; a length past the end takes what is left).
  std::string_view Chunk() { return Bytes(U32()); }

 private:
  uint64_t Int(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && left_ > 0; ++i, ++p_, --left_) {
      v |= uint64_t{*p_} << (8 * i);
    }
    return v;
  }

  const uint8_t* p_;
  size_t left_;
};

// The writer side of Reader::Chunk, for seed generators.
inline void AppendChunk(std::string* out, std::string_view chunk) {
  opmap::base::PutU32LE(out, static_cast<uint32_t>(chunk.size()));
  out->append(chunk);
}

// An input as at most `max` length-prefixed chunks.
inline std::vector<std::string_view> SplitChunks(const uint8_t* data, size_t size, size_t max) {
  Reader r(data, size);
  std::vector<std::string_view> out;
  while (!r.empty() && out.size() < max) out.push_back(r.Chunk());
  return out;
}

// Splits on `sep` (no empty-trailing special case: "a\n" gives "a", "").
inline std::vector<std::string> SplitOn(std::string_view text, char sep, size_t max) {
  std::vector<std::string> out;
  while (out.size() < max) {
    const size_t at = text.find(sep);
    out.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}

}  // namespace opmap::fuzz

#endif  // OPMAP_TESTS_FUZZ_FUZZ_UTIL_H_
