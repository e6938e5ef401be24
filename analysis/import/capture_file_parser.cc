#include "analysis/import/capture_file_parser.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace opmap::analysis {
namespace {

std::string At(size_t offset) { return absl::StrCat(" at byte ", offset); }

}  // namespace

absl::StatusOr<CaptureFile> ParseCaptureFile(std::string_view bytes) {
  CaptureFile f;
  if (bytes.size() < sizeof(capfile::FileHeader)) {
    return absl::InvalidArgumentError(absl::StrCat("capture file: ", bytes.size(),
                                                   " bytes, shorter than its header"));
  }
  std::memcpy(&f.header, bytes.data(), sizeof(f.header));
  if (std::memcmp(f.header.magic, capfile::kMagic, sizeof(capfile::kMagic)) != 0) {
    return absl::InvalidArgumentError("capture file: bad magic (want \"OPMAPCAP\")");
  }
  if (f.header.version != capfile::kVersion || f.header.ring_version != ring::kVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("capture file: version ", f.header.version, " ring version ",
                     f.header.ring_version, "; this reader speaks ", capfile::kVersion, "/",
                     ring::kVersion));
  }
  if (f.header.header_bytes != sizeof(capfile::FileHeader)) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture file: header_bytes ", f.header.header_bytes));
  }
  size_t pos = sizeof(capfile::FileHeader);
  bool saw_metadata = false;
  while (pos < bytes.size()) {
    const size_t left = bytes.size() - pos;
    if (f.trailer) {
      return absl::InvalidArgumentError("capture file: data after the trailer" + At(pos));
    }
    if (left < sizeof(ring::RecordHeader)) {
      f.cut_short = true;
      break;
    }
    ring::RecordHeader h;
    std::memcpy(&h, bytes.data() + pos, sizeof(h));
    if ((h.size_and_commit & ring::kCommitBit) == 0) {
      return absl::InvalidArgumentError("capture file: record without its commit bit" + At(pos));
    }
    const uint32_t size = h.size_and_commit & ring::kSizeMask;
    if (size < sizeof(ring::RecordHeader) || size % 8 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("capture file: record size ", size, At(pos)));
    }
    if (size > left) {
      f.cut_short = true;
      break;
    }
    const std::string_view rec = bytes.substr(pos, size);
    if (h.type == capfile::kFileMetadata) {
      capfile::MetadataRecord m;
      if (saw_metadata || size < sizeof(m)) {
        return absl::InvalidArgumentError("capture file: bad metadata record" + At(pos));
      }
      std::memcpy(&m, rec.data(), sizeof(m));
      if (m.text_len > size - sizeof(m)) {
        return absl::InvalidArgumentError("capture file: metadata text runs past its record" +
                                          At(pos));
      }
      f.metadata.assign(rec.substr(sizeof(m), m.text_len));
      saw_metadata = true;
    } else if (h.type == capfile::kFileTrailer) {
      capfile::TrailerRecord t;
      if (size < sizeof(t)) {
        return absl::InvalidArgumentError("capture file: short trailer" + At(pos));
      }
      std::memcpy(&t, rec.data(), sizeof(t));
      f.trailer = t;
    } else {
      const uint32_t fixed = ring::FixedSize(h.type);
      if (h.type == ring::kPadding || fixed == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("capture file: unexpected record type ", h.type, At(pos)));
      }
      if (size < fixed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "capture file: record of type ", h.type, " shorter than its fixed part", At(pos)));
      }
      f.records.emplace_back(rec);
    }
    pos += size;
  }
  return f;
}

}  // namespace opmap::analysis
