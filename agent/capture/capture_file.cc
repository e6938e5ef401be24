#include "agent/capture/capture_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace opmap::capture {
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

absl::StatusOr<CaptureFile> ReadCaptureFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("capture file ", path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  auto f = ParseCaptureFile(ss.str());
  if (!f.ok()) return absl::Status(f.status().code(), absl::StrCat(path, ": ", f.status().message()));
  return f;
}

absl::StatusOr<CaptureFileWriter> CaptureFileWriter::Create(const std::string& path,
                                                            uint32_t pid,
                                                            uint64_t ring_capacity,
                                                            std::string_view metadata) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("capture file ", path, ": ", std::strerror(errno)));
  }
  return CreateOnFd(fd, pid, ring_capacity, metadata);
}

absl::StatusOr<CaptureFileWriter> CaptureFileWriter::CreateOnFd(int fd, uint32_t pid,
                                                                uint64_t ring_capacity,
                                                                std::string_view metadata) {
  CaptureFileWriter w(fd);
  capfile::FileHeader h{};
  std::memcpy(h.magic, capfile::kMagic, sizeof(h.magic));
  h.version = capfile::kVersion;
  h.header_bytes = sizeof(h);
  h.pid = pid;
  h.ring_version = ring::kVersion;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  h.created_ns = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  h.ring_capacity = ring_capacity;
  if (auto s = w.Write(&h, sizeof(h)); !s.ok()) return s;
  capfile::MetadataRecord m{};
  const uint32_t size = ring::AlignRecord(static_cast<uint32_t>(sizeof(m) + metadata.size()));
  m.h.size_and_commit = size | ring::kCommitBit;
  m.h.type = capfile::kFileMetadata;
  m.text_len = static_cast<uint32_t>(metadata.size());
  std::string rec(size, '\0');
  std::memcpy(rec.data(), &m, sizeof(m));
  std::memcpy(rec.data() + sizeof(m), metadata.data(), metadata.size());
  if (auto s = w.Write(rec.data(), rec.size()); !s.ok()) return s;
  return w;
}

CaptureFileWriter::CaptureFileWriter(CaptureFileWriter&& o) noexcept
    : fd_(o.fd_), records_(o.records_) {
  o.fd_ = -1;
}

CaptureFileWriter::~CaptureFileWriter() {
  if (fd_ >= 0) close(fd_);
}

absl::Status CaptureFileWriter::Write(const void* bytes, size_t n) {
  const auto* p = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t w = write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return absl::DataLossError(absl::StrCat("capture file: write: ", std::strerror(errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status CaptureFileWriter::Append(std::span<const uint8_t> record) {
  if (record.size() < sizeof(ring::RecordHeader) || record.size() % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("record of ", record.size(), " bytes"));
  }
  ++records_;
  return Write(record.data(), record.size());
}

absl::Status CaptureFileWriter::Finish(capfile::TrailerRecord trailer) {
  trailer.h.size_and_commit = static_cast<uint32_t>(sizeof(trailer)) | ring::kCommitBit;
  trailer.h.type = capfile::kFileTrailer;
  trailer.h.flags = 0;
  trailer.records_written = records_;
  absl::Status s = Write(&trailer, sizeof(trailer));
  if (close(fd_) != 0 && s.ok()) s = absl::DataLossError("capture file: close failed");
  fd_ = -1;
  return s;
}

}  // namespace opmap::capture
