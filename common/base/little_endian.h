// Little-endian integers in byte strings: the on-disk encoding of the agent's spool files
// (records and the spool state), written and read in one place so both agree.
#ifndef OPMAP_COMMON_BASE_LITTLE_ENDIAN_H_
#define OPMAP_COMMON_BASE_LITTLE_ENDIAN_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace opmap::base {

inline void PutU32LE(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutU64LE(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
// The caller has checked that b holds `at + 4` (or `at + 8`) bytes.
inline uint32_t GetU32LE(std::string_view b, uint64_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
inline uint64_t GetU64LE(std::string_view b, uint64_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

}  // namespace opmap::base

#endif  // OPMAP_COMMON_BASE_LITTLE_ENDIAN_H_
