#include "agent/spool/spool_record.h"

#include <zlib.h>

#include <algorithm>

#include "common/base/little_endian.h"

namespace opmap::agent {
namespace {

using base::GetU32LE;
using base::GetU64LE;
using base::PutU32LE;
using base::PutU64LE;

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
  PutU32LE(&body_key, static_cast<uint32_t>(session_id.size()));
  body_key.append(session_id);
  PutU64LE(&body_key, seq);
  const uint64_t body_len = body_key.size() + payload.size();

  std::string len_bytes;
  PutU32LE(&len_bytes, static_cast<uint32_t>(body_len));
  uint32_t crc = Crc(Crc(Crc(0, len_bytes), body_key), payload);

  std::string out;
  out.reserve(kRecordHeaderBytes + body_key.size());
  PutU32LE(&out, kRecordMagic);
  out.append(len_bytes);
  PutU32LE(&out, crc);
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
    PutU32LE(&magic, kRecordMagic);
    const uint64_t n = std::min<uint64_t>(left, 4);
    r.outcome = magic.compare(0, n, bytes.substr(offset, n)) == 0
                    ? ParseOutcome::kTruncated
                    : ParseOutcome::kCorrupt;
    return r;
  }
  if (GetU32LE(bytes, offset) != kRecordMagic) return r;
  const uint64_t body_len = GetU32LE(bytes, offset + 4);
  if (body_len < kRecordKeyFixedBytes + 1 || body_len > kMaxRecordBodyBytes) return r;
  if (body_len > left - kRecordHeaderBytes) {
    r.outcome = ParseOutcome::kTruncated;
    return r;
  }
  std::string_view body = bytes.substr(offset + kRecordHeaderBytes, body_len);
  const uint32_t crc = Crc(Crc(0, bytes.substr(offset + 4, 4)), body);
  if (crc != GetU32LE(bytes, offset + 8)) return r;
  // The crc matched, but a writer bug must still not make us read out of bounds.
  const uint64_t session_len = GetU32LE(body, 0);
  if (session_len == 0 || session_len > kMaxSessionIdBytes ||
      session_len > body_len - kRecordKeyFixedBytes) {
    return r;
  }
  r.session_id = body.substr(4, session_len);
  r.seq = GetU64LE(body, 4 + session_len);
  if (r.seq == 0) return r;
  r.payload = body.substr(kRecordKeyFixedBytes + session_len);
  r.size = kRecordHeaderBytes + body_len;
  r.outcome = ParseOutcome::kOk;
  return r;
}

}  // namespace opmap::agent
