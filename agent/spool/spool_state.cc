#include "agent/spool/spool_state.h"

#include <zlib.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/spool/spool_record.h"
#include "common/base/little_endian.h"

namespace opmap::agent {
namespace {

using base::PutU32LE;
using base::PutU64LE;

constexpr uint32_t kStateMagic = 0x5453504F;  // 'O' 'P' 'S' 'T'
constexpr uint32_t kStateVersion = 1;
constexpr uint64_t kStateHeaderBytes = 12;

// Reads little-endian integers from a byte string, refusing to run past its end.
class Reader {
 public:
  explicit Reader(absl::string_view b) : b_(b) {}
  bool U32(uint32_t* v) { return Int(4, v); }
  bool U64(uint64_t* v) { return Int(8, v); }
  bool Bytes(uint64_t n, std::string* out) {
    if (n > b_.size() - at_) return false;
    *out = std::string(b_.substr(at_, n));
    at_ += n;
    return true;
  }
  uint64_t at() const { return at_; }
  bool done() const { return at_ == b_.size(); }

 private:
  template <typename T>
  bool Int(int n, T* v) {
    if (static_cast<uint64_t>(n) > b_.size() - at_) return false;
    T x = 0;
    for (int i = n - 1; i >= 0; --i) x = (x << 8) | static_cast<uint8_t>(b_[at_ + i]);
    *v = x;
    at_ += n;
    return true;
  }
  absl::string_view b_;
  uint64_t at_ = 0;
};

uint32_t Crc(absl::string_view bytes) {
  // The state is small (one entry per session with spooled records): one call suffices.
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

absl::Status Bad(const Reader& r, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("spool state: ", what, " at byte ", r.at()));
}

}  // namespace

std::string EncodeSpoolState(const SpoolState& state) {
  std::string body;
  PutU64LE(&body, state.dropped_batches);
  PutU64LE(&body, state.dropped_bytes);
  PutU32LE(&body, static_cast<uint32_t>(state.acked.size()));
  for (const auto& [session, seq] : state.acked) {
    PutU32LE(&body, static_cast<uint32_t>(session.size()));
    body.append(session);
    PutU64LE(&body, seq);
  }
  std::string out;
  PutU32LE(&out, kStateMagic);
  PutU32LE(&out, kStateVersion);
  PutU32LE(&out, Crc(body));
  out.append(body);
  return out;
}

absl::StatusOr<SpoolState> DecodeSpoolState(absl::string_view bytes) {
  Reader r(bytes);
  uint32_t magic = 0, version = 0, crc = 0;
  if (!r.U32(&magic) || magic != kStateMagic) return Bad(r, "bad magic");
  if (!r.U32(&version) || version != kStateVersion) return Bad(r, "unknown version");
  if (!r.U32(&crc) || crc != Crc(bytes.substr(kStateHeaderBytes))) {
    return Bad(r, "crc mismatch");
  }
  SpoolState state;
  uint32_t n = 0;
  if (!r.U64(&state.dropped_batches) || !r.U64(&state.dropped_bytes) || !r.U32(&n)) {
    return Bad(r, "cut short");
  }
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    std::string session;
    uint64_t seq = 0;
    if (!r.U32(&len) || len == 0 || len > kMaxSessionIdBytes) return Bad(r, "bad session length");
    if (!r.Bytes(len, &session) || !r.U64(&seq)) return Bad(r, "cut short");
    state.acked.emplace_back(std::move(session), seq);
  }
  if (!r.done()) return Bad(r, "trailing bytes");
  return state;
}

}  // namespace opmap::agent
