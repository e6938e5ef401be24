#include "agent/spool/spool_record.h"

#include <zlib.h>

#include <algorithm>

namespace opmap::agent {
namespace {

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t GetU32(std::string_view b, uint64_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
uint64_t GetU64(std::string_view b, uint64_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

// zlib's crc32 takes a uInt length; feed large buffers in pieces.
uint32_t Crc(uint32_t crc, std::string_view bytes) {
  uLong c = crc;
  while (!bytes.empty()) {
    size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(c);
}

}  // namespace

std::string EncodeRecordPrefix(std::string_view session_id, uint64_t seq,
                               std::string_view payload) {
  std::string body_key;
  PutU32(&body_key, static_cast<uint32_t>(session_id.size()));
  body_key.append(session_id);
  PutU64(&body_key, seq);
  const uint64_t body_len = body_key.size() + payload.size();

  std::string len_bytes;
  PutU32(&len_bytes, static_cast<uint32_t>(body_len));
  uint32_t crc = Crc(Crc(Crc(0, len_bytes), body_key), payload);

  std::string out;
  out.reserve(kRecordHeaderBytes + body_key.size());
  PutU32(&out, kRecordMagic);
  out.append(len_bytes);
  PutU32(&out, crc);
  out.append(body_key);
  return out;
}

ParsedRecord ParseRecordAt(std::string_view bytes, uint64_t offset) {
  ParsedRecord r;
  if (offset > bytes.size()) return r;
  const uint64_t left = bytes.size() - offset;
  // A header cut short is a torn write only if what is there agrees with a record start.
  if (left < kRecordHeaderBytes) {
    std::string magic;
    PutU32(&magic, kRecordMagic);
    const uint64_t n = std::min<uint64_t>(left, 4);
    r.outcome = magic.compare(0, n, bytes.substr(offset, n)) == 0
                    ? ParseOutcome::kTruncated
                    : ParseOutcome::kCorrupt;
    return r;
  }
  if (GetU32(bytes, offset) != kRecordMagic) return r;
  const uint64_t body_len = GetU32(bytes, offset + 4);
  if (body_len < kRecordKeyFixedBytes + 1 || body_len > kMaxRecordBodyBytes) return r;
  if (body_len > left - kRecordHeaderBytes) {
    r.outcome = ParseOutcome::kTruncated;
    return r;
  }
  std::string_view body = bytes.substr(offset + kRecordHeaderBytes, body_len);
  const uint32_t crc = Crc(Crc(0, bytes.substr(offset + 4, 4)), body);
  if (crc != GetU32(bytes, offset + 8)) return r;
  // The crc matched, but a writer bug must still not make us read out of bounds.
  const uint64_t session_len = GetU32(body, 0);
  if (session_len == 0 || session_len > kMaxSessionIdBytes ||
      session_len > body_len - kRecordKeyFixedBytes) {
    return r;
  }
  r.session_id = body.substr(4, session_len);
  r.seq = GetU64(body, 4 + session_len);
  if (r.seq == 0) return r;
  r.payload = body.substr(kRecordKeyFixedBytes + session_len);
  r.size = kRecordHeaderBytes + body_len;
  r.outcome = ParseOutcome::kOk;
  return r;
}

}  // namespace opmap::agent
